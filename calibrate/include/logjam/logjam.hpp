// logjam.hpp: a log sink for a native runtime hosted by CPython (a pybind11
// or plain C-API binding) that never hangs, never crashes, never loses a
// line, never raises on bad bytes and never swallows a Ctrl-C. C++17,
// Linux, CPython's C API only; pybind11 is optional (see logjam::pybind11_call).
//
// docs/SINK.md is the manual: the API, the guarantees and the rules, each
// rule named as sim/policy's logjam sink names it. In short:
//
//   logjam::install(new logjam::Logjam());       // once, at module init (GIL held)
//   logjam::enter();  ...  logjam::leave()       // around every binding call (GIL held)
//   logjam::log('I', formatted_line);            // the runtime's log callback, any thread
//   logjam::raise(PyExc_RuntimeError, text);     // a native error as a Python exception
//
// A sink of your own derives from logjam::Sink; the harness plays it against
// real CPython (`logjam calibrate -sink FILE.cpp`).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <climits>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <string>
#include <string_view>
#include <thread>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <type_traits>
#include <unistd.h>
#include <utility>
#include <vector>

namespace logjam {

// RoomWait: how long a writer waits for room on a stalled fd 2 (ms).
constexpr int kRoomWaitMs = 100;
// The keep buffer's cap and where it cuts back to (the oldest lines go,
// counted in the left-out note).
constexpr size_t kKeepCap = 64 * 1024, kKeepLow = 32 * 1024;

// ---------------------------------------------------------------- observer

// Observer sees what a sink does (the harness's telemetry); every method
// is optional. Called with whatever locks the sink holds: do not log.
struct Observer {
  virtual ~Observer() = default;
  // A flush of kept lines to `to` ("sys.stderr" or "fd 2").
  virtual void flush(size_t lines, const std::string &note, const char *to) { (void)lines; (void)note; (void)to; }
  // Kept lines written to fd 2 instead (why says when).
  virtual void fallback(size_t lines, const char *why) { (void)lines; (void)why; }
  // The fatal path wrote these kept lines (oldest first) before the fatal
  // line; left were not written (no room).
  virtual void fatal_flush(const std::vector<std::string> &written, size_t left) { (void)written; (void)left; }
  // The fatal path wrote to fd 2's outliving copy (descriptor fd) instead
  // of fd 2, first the drained bytes fd 2's forwarder pipe held.
  virtual void outliving_copy(int fd, size_t drained) { (void)fd; (void)drained; }
  // A write to fd 2 that may block with the GIL held begins / ends.
  virtual void fd2_write(bool begin) { (void)begin; }
  // A line logged outside a call was kept process-wide; the sink's lock
  // is still held (calibrate's row F10 raises its crash here).
  virtual void kept_outside() {}
};

namespace detail {
inline Observer &null_observer() { static Observer o; return o; }
inline std::atomic<Observer *> &observer_slot() { static std::atomic<Observer *> o{&null_observer()}; return o; }
}  // namespace detail
inline Observer &observer() { return *detail::observer_slot().load(); }
inline void set_observer(Observer *o) { detail::observer_slot().store(o ? o : &detail::null_observer()); }
// observed: an observer is set (the fatal path builds its record only then).
inline bool observed() { return detail::observer_slot().load() != &detail::null_observer(); }

// ---------------------------------------------------------------- this thread

// ThreadInfo: the calling thread's binding-call depth and its Python
// identity (threading.current_thread(): name, daemon), read once with the
// GIL held.
struct ThreadInfo {
  int depth = 0;
  bool known = false;
  std::string name = "?";
  bool daemon = false;
};

inline ThreadInfo &this_thread() {
  static thread_local ThreadInfo ti;
  return ti;
}

// identify fills this_thread()'s name and daemon flag (GIL held).
inline ThreadInfo &identify() {
  ThreadInfo &ti = this_thread();
  if (ti.known || !PyGILState_Check()) return ti;
  ti.known = true;
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);
  PyObject *threading = PyImport_ImportModule("threading");
  PyObject *t = threading ? PyObject_CallMethod(threading, "current_thread", NULL) : nullptr;
  Py_XDECREF(threading);
  if (t) {
    PyObject *n = PyObject_GetAttrString(t, "name");
    if (n && PyUnicode_Check(n)) {
      const char *s = PyUnicode_AsUTF8(n);
      if (s) ti.name = s;
    }
    Py_XDECREF(n);
    PyObject *d = PyObject_GetAttrString(t, "daemon");
    if (d) ti.daemon = PyObject_IsTrue(d) == 1;
    Py_XDECREF(d);
    Py_DECREF(t);
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, tb);
  return ti;
}

inline bool in_call() { return this_thread().depth > 0; }

// ---------------------------------------------------------------- Python side

namespace detail {
// The last answer of stderr_replaced() seen with the GIL held: a thread
// logging without the GIL cannot ask Python.
inline std::atomic<bool> &replaced_seen() { static std::atomic<bool> r{false}; return r; }
}  // namespace detail

namespace detail {
// ask_replaced: stderr_replaced() with the GIL held (enter, leave, a flush):
// sys's dict and the two names, looked up once (PySys_GetObject makes a str
// of its argument on every call); PyDict_GetItemWithError, which neither
// fetches nor restores an exception (PyDict_GetItem does both, each call),
// unless one is set already.
inline bool ask_replaced() {
  static PyObject *sysdict = nullptr, *k_stderr = nullptr, *k_orig = nullptr;
  if (!sysdict) {
    PyObject *sys = PyImport_AddModule("sys");  // borrowed; lives as long as the interpreter
    k_stderr = PyUnicode_InternFromString("stderr");
    k_orig = PyUnicode_InternFromString("__stderr__");
    if (!sys || !k_stderr || !k_orig) {
      PyErr_Clear();
      return PySys_GetObject("stderr") != PySys_GetObject("__stderr__");
    }
    sysdict = PyModule_GetDict(sys);
  }
  bool r;
  if (PyErr_Occurred()) {
    r = PyDict_GetItem(sysdict, k_stderr) != PyDict_GetItem(sysdict, k_orig);
  } else {
    PyObject *err = PyDict_GetItemWithError(sysdict, k_stderr);
    PyObject *orig = err || !PyErr_Occurred() ? PyDict_GetItemWithError(sysdict, k_orig) : nullptr;
    if ((!err || !orig) && PyErr_Occurred()) PyErr_Clear();
    r = err != orig;
  }
  replaced_seen().store(r, std::memory_order_relaxed);
  return r;
}
}  // namespace detail

// stderr_replaced: sys.stderr is not sys.__stderr__ (a capture, a
// notebook's stream). With the GIL held it asks Python; without, the last
// answer seen.
inline bool stderr_replaced() {
  if (!PyGILState_Check()) return detail::replaced_seen().load();
  return detail::ask_replaced();
}

// daemon_rule: a daemon thread's lines go to fd 2 directly on Linux with
// Python < 3.13.8, where the interpreter's exit force-unwinds daemon threads
// out of any call that releases the GIL (a Python write does).
inline bool daemon_rule() {
#if defined(__linux__)
  return this_thread().daemon && PY_VERSION_HEX < 0x030D08F0;
#else
  return false;
#endif
}

// decode_escaped: bytes as Python text, invalid UTF-8 escaped
// (backslashreplace): never a UnicodeDecodeError. New reference or NULL.
inline PyObject *decode_escaped(const std::string &b) {
  return PyUnicode_DecodeUTF8(b.data(), (Py_ssize_t)b.size(), "backslashreplace");
}

// python_write: sys.stderr.write(escaped text) then .flush(), GIL held.
// False with the exception set when either raised.
inline bool python_write(const std::string &b) {
  PyObject *text = decode_escaped(b);
  if (!text) return false;
  PyObject *err = PySys_GetObject("stderr");  // borrowed
  if (!err || err == Py_None) { Py_DECREF(text); return true; }
  Py_INCREF(err);
  PyObject *r = PyObject_CallMethod(err, "write", "O", text);
  Py_DECREF(text);
  if (!r) { Py_DECREF(err); return false; }
  Py_DECREF(r);
  r = PyObject_CallMethod(err, "flush", NULL);
  Py_DECREF(err);
  if (!r) return false;
  Py_DECREF(r);
  return true;
}

// Exc: a fetched Python exception (owned references).
struct Exc {
  PyObject *t = nullptr, *v = nullptr, *tb = nullptr;
  bool set() const { return t != nullptr; }
  static Exc fetch() { Exc e; PyErr_Fetch(&e.t, &e.v, &e.tb); return e; }
  void restore() { PyErr_Restore(t, v, tb); t = v = tb = nullptr; }
  void drop() { Py_XDECREF(t); Py_XDECREF(v); Py_XDECREF(tb); t = v = tb = nullptr; }
  bool is_keyboard_interrupt() const { return t && PyErr_GivenExceptionMatches(t, PyExc_KeyboardInterrupt); }
};

// raise_escaped sets type with text decoded with backslashreplace (never a
// UnicodeDecodeError, never a dropped message). GIL held.
inline void raise_escaped(PyObject *type, const std::string &text) {
  PyObject *s = decode_escaped(text);
  if (!s) return;
  PyErr_SetObject(type, s);
  Py_DECREF(s);
}

// ---------------------------------------------------------------- keep buffer

// note: the left-out note, "<prefix>: N lines (B bytes) left out\n".
// NoteBuf formats it without allocating (the fatal path may run in a
// signal handler): with the prefix, cut past its room; or only what
// follows the prefix, which note() puts after the whole prefix.
inline std::string &note_prefix() { static std::string p = "executorch"; return p; }
struct NoteBuf {
  char buf[160];
  size_t n = 0;
  void put(const char *p, size_t len) {
    for (size_t i = 0; i < len && n < sizeof buf; i++) buf[n++] = p[i];
  }
  void num(long v) {
    char d[24];
    size_t k = 0;
    unsigned long u = v < 0 ? 0 : (unsigned long)v;
    do { d[k++] = (char)('0' + u % 10); u /= 10; } while (u > 0);
    while (k > 0) put(&d[--k], 1);
  }
  NoteBuf(long lines, long bytes, bool prefix = true) {
    if (prefix) {
      const std::string &pre = note_prefix();
      put(pre.data(), std::min(pre.size(), sizeof buf - 64));
    }
    put(": ", 2);
    num(lines);
    put(" lines (", 8);
    num(bytes);
    put(" bytes) left out\n", 17);
  }
  std::string_view view() const { return {buf, n}; }
};
inline std::string note(long lines, long bytes) { return note_prefix() + std::string(NoteBuf(lines, bytes, false).view()); }

// Taken: what a flush writes: the note (if any), then the lines.
struct Taken {
  std::string note;
  std::vector<std::string> lines;
  bool empty() const { return note.empty() && lines.empty(); }
  std::string bytes() const {
    std::string b = note;
    for (auto &l : lines) b += l;
    return b;
  }
  std::vector<std::string> all() const {
    std::vector<std::string> a;
    if (!note.empty()) a.push_back(note);
    a.insert(a.end(), lines.begin(), lines.end());
    return a;
  }
  // then: these lines followed by next's, its note first (two notes count
  // lines left out of two places, written one after the other).
  Taken then(const Taken &next) const {
    Taken t = *this;
    auto more = next.all();
    t.lines.insert(t.lines.end(), more.begin(), more.end());
    return t;
  }
};

// KeepBuffer: lines kept in order, at most kKeepCap bytes; when a line
// would pass the cap the oldest go until kKeepLow is left (the new line
// counted), each counted exactly for the note.
class KeepBuffer {
  std::deque<std::string> lines_;
  size_t bytes_ = 0;
  long left_n_ = 0, left_b_ = 0;
  // changing_: its own thread is changing it: a signal handler that
  // interrupted that would read it torn (the fatal path leaves it out).
  volatile sig_atomic_t changing_ = 0;
  struct Changing {
    KeepBuffer &k;
    explicit Changing(KeepBuffer &k) : k(k) { k.changing_ = 1; std::atomic_signal_fence(std::memory_order_seq_cst); }
    ~Changing() { std::atomic_signal_fence(std::memory_order_seq_cst); k.changing_ = 0; }
  };

 public:
  void add(std::string b) {
    Changing ch(*this);
    if (bytes_ + b.size() > kKeepCap) {
      while (!lines_.empty() && bytes_ + b.size() > kKeepLow) {
        left_n_++;
        left_b_ += (long)lines_.front().size();
        bytes_ -= lines_.front().size();
        lines_.pop_front();
      }
    }
    bytes_ += b.size();
    lines_.push_back(std::move(b));
  }
  // count adds lines that were never kept to the note (a daemon's lines
  // that found no room).
  void count(long n, long b) { left_n_ += n; left_b_ += b; }
  bool empty() const { return lines_.empty() && left_n_ == 0; }
  bool changing() const { return changing_ != 0; }
  // each: the note (if any lines were left out), then the lines, to f
  // (string_view, is it the note), in place: nothing allocated, for the
  // fatal path; stops when f returns false.
  template <class F>
  bool each(F &&f) const {
    if (left_n_ > 0) {
      NoteBuf nb(left_n_, left_b_);
      if (!f(nb.view(), true)) return false;
    }
    for (const std::string &l : lines_) {
      if (!f(std::string_view(l), false)) return false;
    }
    return true;
  }
  Taken take() {
    Changing ch(*this);
    Taken t;
    if (left_n_ > 0) t.note = note(left_n_, left_b_);
    t.lines.assign(std::make_move_iterator(lines_.begin()), std::make_move_iterator(lines_.end()));
    lines_.clear();
    bytes_ = 0;
    left_n_ = left_b_ = 0;
    return t;
  }
};

// ---------------------------------------------------------------- fd 2

namespace fd2 {

enum class Kind { File, Pipe, TTY, Socket, Other };

// kind_of: what st, fd 2's, is. A file, a block device and a memory
// device (major 1: /dev/null, /dev/zero, /dev/full) are a File: a plain
// write never waits for a reader there.
inline Kind kind_of(const struct stat &st) {
  switch (st.st_mode & S_IFMT) {
    case S_IFIFO: return Kind::Pipe;
    case S_IFSOCK: return Kind::Socket;
    case S_IFREG: case S_IFBLK: return Kind::File;
    case S_IFCHR: return major(st.st_rdev) == 1 ? Kind::File : isatty(2) ? Kind::TTY : Kind::Other;
  }
  return Kind::Other;
}

namespace detail {
// seen: fd 2's kind at its last fstat here (process-wide; -1: none yet).
// It only picks the check fd2::now makes; that check decides.
inline std::atomic<int> &seen() { static std::atomic<int> k{-1}; return k; }
inline Kind see(const struct stat &st) {
  Kind k = kind_of(st);
  seen().store((int)k, std::memory_order_relaxed);
  return k;
}
}  // namespace detail

// kind: what fd 2 is now (a capture may dup2 a pipe onto it at any time).
inline Kind kind() {
  struct stat st;
  if (fstat(2, &st) != 0) return Kind::Other;
  return detail::see(st);
}

namespace detail {
// twin: a second, non-blocking open file description of fd 2's tty (or
// pipe, where the kernel refuses RWF_NOWAIT): open("/proc/self/fd/2",
// O_NONBLOCK). O_NONBLOCK on fd 2 itself would change the description the
// whole process (and its parent) shares. Kept while fd 2 is the same
// object (st_dev, st_ino); -1 without /proc. A tty's twin also knows the
// tty's device number (TIOCGDEV on the twin itself): while fd 2 answers
// TIOCGDEV with the same number, fd 2 is that tty (tty_twin).
// Once open, the twin is found without a lock (atomics only: the fatal
// path may run in a signal handler that interrupted its opener, who holds
// mu); a fatal path that finds the opener busy goes without it (-1: poll,
// then at most PIPE_BUF). It is (re)opened only with the stdio lock held.
struct Twin {
  std::mutex mu;  // guards the (re)open
  std::atomic<int> fd{-1};
  std::atomic<dev_t> dev{0};
  std::atomic<ino_t> ino{0};
  std::atomic<bool> is_tty{false};
  std::atomic<unsigned> tty{0};  // TIOCGDEV's answer on the twin
};
inline Twin &twin() { static Twin t; return t; }
// in_fatal: a fatal path is running (it waits for no lock without a bound).
inline std::atomic<bool> &in_fatal() { static std::atomic<bool> f{false}; return f; }
inline int twin_fd(const struct stat &st) {
  Twin &t = twin();
  auto same = [&] { return t.fd.load() >= 0 && t.dev.load() == st.st_dev && t.ino.load() == st.st_ino; };
  if (same()) return t.fd.load();
  std::unique_lock<std::mutex> g(t.mu, std::try_to_lock);
  if (!g.owns_lock()) {
    if (in_fatal().load()) return -1;
    g.lock();
  }
  if (same()) return t.fd.load();
  int old = t.fd.exchange(-1);
  if (old >= 0) close(old);
  t.dev.store(st.st_dev);
  t.ino.store(st.st_ino);
  int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  unsigned d = 0;
  t.is_tty.store(fd >= 0 && ioctl(fd, TIOCGDEV, &d) == 0);
  t.tty.store(d);
  t.fd.store(fd);
  return fd;
}
// tty_twin: the twin while fd 2 is still the tty it was opened on, found
// with one ioctl (TIOCGDEV: the tty's device number; ENOTTY once fd 2 is
// no tty), or -1 (then fstat decides). Stdio lock held.
inline int tty_twin() {
  Twin &t = twin();
  int fd = t.fd.load();
  unsigned d;
  if (fd < 0 || !t.is_tty.load() || ioctl(2, TIOCGDEV, &d) != 0 || d != t.tty.load()) return -1;
  return fd;
}

// plain_write: fd 2 a file (or /dev/null): a plain write.
inline ssize_t plain_write(const char *p, size_t len) {
  return write(2, p, len);  // a file always has room
}
// twin_write: the twin's write, or without /proc (fd -1) what poll says
// fits (a pipe takes PIPE_BUF bytes whole once it reports room).
inline ssize_t twin_write(int fd, const char *p, size_t len) {
  if (fd >= 0) return write(fd, p, len);
  struct pollfd q = {2, POLLOUT, 0};
  if (poll(&q, 1, 0) <= 0 || !(q.revents & POLLOUT)) { errno = EAGAIN; return -1; }
  return write(2, p, std::min<size_t>(len, PIPE_BUF));
}

// refused_write: the non-blocking write where fd 2 refused RWF_NOWAIT
// (EOPNOTSUPP: a file on most file systems, a tty, a pipe before Linux
// 5.8), by what fd 2 is. Returns what write(2) returns.
// refused: the fd-2 object (st_dev, st_ino, its kind) that last refused
// RWF_NOWAIT: while fd 2 is still it, try_write goes straight to its
// write (refused_now: one check instead of a refused pwritev2 and an
// fstat).
struct Refused {
  std::atomic<bool> any{false};
  std::atomic<dev_t> dev{0};
  std::atomic<ino_t> ino{0};
  std::atomic<int> kind{-1};
};
inline Refused &refused() { static Refused r; return r; }

inline ssize_t refused_write_st(const char *p, size_t len, const struct stat &st);
inline ssize_t refused_write(const char *p, size_t len) {
  struct stat st;
  if (fstat(2, &st) != 0) return write(2, p, len);
  refused().dev.store(st.st_dev);
  refused().ino.store(st.st_ino);
  refused().kind.store((int)see(st));
  refused().any.store(true);
  return refused_write_st(p, len, st);
}
// still_refused: fd 2 is the object that refused RWF_NOWAIT; then *st is it.
inline bool still_refused(struct stat *st) {
  if (!refused().any.load()) return false;
  if (fstat(2, st) == 0 && st->st_dev == refused().dev.load() && st->st_ino == refused().ino.load()) return true;
  refused().any.store(false);
  return false;
}
inline ssize_t refused_write_st(const char *p, size_t len, const struct stat &st) {
  switch (st.st_mode & S_IFMT) {
    case S_IFREG: case S_IFBLK:
      return plain_write(p, len);
    case S_IFSOCK:
      return send(2, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    case S_IFIFO: case S_IFCHR:
      return twin_write(twin_fd(st), p, len);
  }
  return write(2, p, len);
}
// refused_now: while fd 2 is the object that refused RWF_NOWAIT (*still),
// its non-blocking write, after one check of what fd 2 is: a file still
// seekable (lseek; a pipe, a socket and a tty answer ESPIPE) is written
// plainly, a tty still the twin's (tty_twin) through the twin, anything
// else by its fstat (still_refused).
inline ssize_t refused_now(const char *p, size_t len, bool *still) {
  *still = true;
  int k = refused().kind.load();
  if (k == (int)Kind::File && lseek(2, 0, SEEK_CUR) >= 0) return plain_write(p, len);
  if (k == (int)Kind::TTY) {
    if (int fd = tty_twin(); fd >= 0) return twin_write(fd, p, len);
  }
  struct stat st;
  if (still_refused(&st)) return refused_write_st(p, len, st);
  *still = false;
  return -1;
}
}  // namespace detail

// Now: fd 2 as a call's first line finds it (fd2::now): checked, the line
// is written as kind says without another check (a File plainly, a TTY
// through twin); forwarder: fd 2 is a pipe an in-process forwarder drains.
struct Now {
  bool checked = false;
  Kind kind = Kind::Other;
  int twin = -1;
  bool forwarder = false;
};
inline Now now();

// try_write writes what fd 2 takes now, never blocking, and returns the
// bytes taken (0: no room). One mechanism for every fd 2:
// pwritev2(RWF_NOWAIT) on fd 2 itself, one system call on the fast path
// (a pipe, a socket, /dev/null: a pipe takes what fits, a line of at most
// PIPE_BUF whole or not at all); where the kernel refuses it (EOPNOTSUPP),
// by what fd 2 is (detail::refused_write): a file a plain write, a socket
// send(MSG_DONTWAIT), a tty (or an old kernel's pipe) the twin, each line
// after one check that fd 2 is still that (detail::refused_now). "No room"
// from a file is not believed (a file always has room: the plain write).
// An error other than "no room" gives the bytes up (returns len), as
// fwrite would. With now (checked by fd2::now with the stdio lock's holder
// unchanged since), the first write makes no check of its own. Stdio lock
// held.
inline size_t try_write(const char *p, size_t len, const Now *now = nullptr) {
  size_t n = 0;
  if (now && now->checked && now->kind == Kind::TTY && detail::twin().fd.load() != now->twin) now = nullptr;  // reopened since
  while (n < len) {
    ssize_t m = -1;
    bool done = false;
    if (now && now->checked) {
      m = now->kind == Kind::File ? detail::plain_write(p + n, len - n) : detail::twin_write(now->twin, p + n, len - n);
      done = true;
    } else if (detail::refused().any.load()) {
      m = detail::refused_now(p + n, len - n, &done);
    }
    now = nullptr;
    if (!done) {
      struct iovec v = {(void *)(p + n), len - n};
      m = pwritev2(2, &v, 1, -1, RWF_NOWAIT);
      if (m < 0 && errno == EAGAIN && kind() == Kind::File) m = detail::plain_write(p + n, len - n);
      else if (m < 0 && (errno == EOPNOTSUPP || errno == EINVAL || errno == ESPIPE)) m = detail::refused_write(p + n, len - n);
    }
    if (m > 0) { n += (size_t)m; continue; }
    if (m < 0 && errno == EINTR) continue;
    if (m == 0 || errno == EAGAIN || errno == EWOULDBLOCK) return n;
    return len;
  }
  return n;
}

// ms_left: what is left before deadline, in whole ms for poll, rounded up:
// rounded down, a wait for room ended up to 1 ms before its bound.
inline int ms_left(std::chrono::steady_clock::time_point deadline) {
  auto left = deadline - std::chrono::steady_clock::now();
  if (left <= left.zero()) return 0;
  return (int)std::chrono::ceil<std::chrono::milliseconds>(left).count();
}

// room: fd 2 a pipe or socket: poll POLLOUT up to wait_ms (EINTR: poll
// again for what is left); a tty or a file: room (a file always has it; a
// tty is checked by room_now and the bounded write).
inline bool room(int wait_ms, Kind k) {
  if (k != Kind::Pipe && k != Kind::Socket) return true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    struct pollfd q = {2, POLLOUT, 0};
    int r = poll(&q, 1, ms_left(deadline));
    if (r > 0) return (q.revents & (POLLOUT | POLLERR | POLLHUP)) != 0;
    if (r == 0) return false;
    if (errno != EINTR) return true;
  }
}
inline bool room(int wait_ms) { return room(wait_ms, kind()); }

// room_now: a stalled call's re-check, no wait: a pipe's room check, a
// tty's POLLOUT (a stalled terminal takes nothing), a file always.
inline bool room_now() {
  Kind k = kind();
  if (k == Kind::TTY) {
    struct pollfd q = {2, POLLOUT, 0};
    return poll(&q, 1, 0) > 0 && (q.revents & POLLOUT);
  }
  return room(0, k);
}

// write_all: a blocking write(2) loop that retries EINTR and short writes
// (glibc's fwrite gives up on EINTR: the rest of the line is lost).
inline void write_all(const char *p, size_t len) {
  size_t off = 0;
  while (off < len) {
    ssize_t n = write(2, p + off, len - off);
    if (n > 0) { off += (size_t)n; continue; }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {  // someone set O_NONBLOCK on fd 2: wait for room
      struct pollfd q = {2, POLLOUT, 0};
      poll(&q, 1, -1);
      continue;
    }
    return;  // EPIPE and the like: the line is given up, as fwrite would
  }
}

// write_bounded: the room check that does not serialise writer and reader:
// a non-blocking write first; only when fd 2 took nothing (or not all) a
// wait for room bounded by wait_ms, then a write again. Returns the bytes
// that went out. now: as try_write's. Stdio lock held.
inline size_t write_bounded(std::string_view b, int wait_ms, const Now *now = nullptr) {
  size_t n = try_write(b.data(), b.size(), now);
  if (n == b.size()) return n;
  // No room now: wait for it with poll on fd 2 itself, whatever fd 2 is (a
  // pipe's or socket's room, a tty's POLLOUT; a file is never here: "no
  // room" from a file is not believed), EINTR polling again for what is
  // left: no fstat on this path, which a drained small pipe takes often.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (n < b.size()) {
    bool r;
    for (;;) {
      struct pollfd q = {2, POLLOUT, 0};
      int p = poll(&q, 1, ms_left(deadline));
      if (p < 0 && errno == EINTR) continue;
      r = p > 0 ? (q.revents & (POLLOUT | POLLERR | POLLHUP)) != 0 : p < 0;  // an error other than EINTR: write and see
      break;
    }
    if (!r) return n;
    size_t m = try_write(b.data() + n, b.size() - n);
    if (m == 0) {
      if (std::chrono::steady_clock::now() >= deadline) return n;
      struct timespec t = {0, 1000000};  // room reported that the write did not find (less than a line): look again
      nanosleep(&t, nullptr);
    }
    n += m;
  }
  return n;
}

// write_line_bounded: write_bounded, and a line fd 2 took only part of is
// finished before the stdio lock is let go (never half a line on fd 2).
// False when fd 2 took nothing. Stdio lock held.
inline bool write_line_bounded(std::string_view b, int wait_ms, const Now *now = nullptr) {
  observer().fd2_write(true);
  size_t n = write_bounded(b, wait_ms, now);
  if (0 < n && n < b.size()) write_all(b.data() + n, b.size() - n);
  observer().fd2_write(false);
  return n > 0;
}

// try_direct: a line to fd 2 only if the stdio lock is free and fd 2 takes
// it within wait_ms (now: what fd2::now found, as try_write's).
inline bool try_direct(const std::string &b, int wait_ms, const Now *now = nullptr) {
  if (ftrylockfile(stderr) != 0) return false;
  bool ok = write_line_bounded(b, wait_ms, now);
  funlockfile(stderr);
  return ok;
}

// direct: a blocking write of a line under the stdio lock (GIL kept if
// held): the fatal path and a daemon's lines while there is room.
inline void direct(std::string_view b) {
  observer().fd2_write(true);
  flockfile(stderr);
  write_all(b.data(), b.size());
  funlockfile(stderr);
  observer().fd2_write(false);
}

// direct_while_room writes lines while the room check finds room and
// returns what was left (lines, bytes).
inline std::pair<long, long> direct_while_room(const std::vector<std::string> &all) {
  for (size_t i = 0; i < all.size(); i++) {
    if (!room(kRoomWaitMs)) {
      long n = 0, b = 0;
      for (size_t j = i; j < all.size(); j++) { n++; b += (long)all[j].size(); }
      return {n, b};
    }
    direct(all[i]);
  }
  return {0, 0};
}

// write_released writes lines to fd 2 with the GIL released (a forwarder
// that needs it can drain fd 2) and the stdio lock held (no other line lands
// inside them). A SIGINT that ends a blocked write (EINTR) loses nothing:
// with run_handlers, the first one runs the handler (the stdio lock let go,
// the GIL retaken, between two lines: a signal inside a line is handled once
// the line is out) and its exception is returned, to be raised after the
// call; later ones stay pending for the eval loop. GIL held on entry and exit.
inline Exc write_released(const std::vector<std::string> &all, bool run_handlers) {
  Exc raised;
  PyThreadState *st = PyEval_SaveThread();
  flockfile(stderr);
  bool pending = false;  // a signal ended a write: run the handler at the next line boundary
  auto run_handler = [&] {
    pending = false;
    if (!run_handlers || raised.set()) return;
    funlockfile(stderr);
    PyEval_RestoreThread(st);
    if (PyErr_CheckSignals() < 0) raised = Exc::fetch();
    st = PyEval_SaveThread();
    flockfile(stderr);
  };
  for (const std::string &b : all) {
    if (pending) run_handler();
    size_t off = 0;
    while (off < b.size()) {
      ssize_t n = write(2, b.data() + off, b.size() - off);
      if (n > 0) { off += (size_t)n; continue; }
      if (n < 0 && errno == EINTR) {
        pending = true;
        if (off == 0) run_handler();
        continue;
      }
      if (n < 0 && errno == EAGAIN) {
        struct pollfd q = {2, POLLOUT, 0};
        poll(&q, 1, -1);
        continue;
      }
      break;  // an error: the line is given up
    }
  }
  if (pending) run_handler();
  funlockfile(stderr);
  PyEval_RestoreThread(st);
  return raised;
}

// ---- an in-process forwarder's pipe, and fd 2's outliving copy

// What fd 2 is when the sink is installed (st_dev, st_ino): once fd 2 is a
// pipe an in-process forwarder drains (ipykernel, wurlitzer), a descriptor
// still open on this object is the forwarder's saved copy of the old fd 2,
// the stream that outlives the process (docs/CONTRACT.md, "A Fatal line on
// a forwarder's pipe"). The scans use fstat and fcntl only, over
// kScanLimit descriptors: a fatal path in a signal handler can run them.
constexpr int kScanLimit = 1024;
namespace detail {
struct Installed {
  std::atomic<bool> ok{false};
  std::atomic<dev_t> dev{0};
  std::atomic<ino_t> ino{0};
};
inline Installed &installed() { static Installed i; return i; }
inline bool same(const struct stat &a, dev_t dev, ino_t ino) { return a.st_dev == dev && a.st_ino == ino; }
// scan_reader: a descriptor other than fd 2 open for reading on the pipe
// *st2 is, or -1.
inline int scan_reader(const struct stat &st2) {
  for (int d = 0; d < kScanLimit; d++) {
    struct stat st;
    if (d == 2 || fstat(d, &st) != 0 || !same(st, st2.st_dev, st2.st_ino)) continue;
    int fl = fcntl(d, F_GETFL);
    if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY) return d;
  }
  return -1;
}
}  // namespace detail

inline int forwarder_reader();

// record_installed: what fd 2 is now. When it is a forwarder's pipe already
// (the module imported under a capture: a notebook's kernel captures fd 2
// at start), the descriptor sys.stderr names as _original_stdstream_copy
// (ipykernel's OutStream keeps its saved copy of the old fd 2 there, and
// its fileno() returns it) stands for what fd 2 was. GIL held (install()
// runs at import) or no interpreter.
inline void record_installed() {
  struct stat st;
  if (fstat(2, &st) != 0) return;
  if (S_ISFIFO(st.st_mode) && forwarder_reader() >= 0 && Py_IsInitialized() && PyGILState_Check()) {
    PyObject *err = PySys_GetObject("stderr");  // borrowed
    PyObject *fd = err ? PyObject_GetAttrString(err, "_original_stdstream_copy") : nullptr;
    if (fd && PyLong_Check(fd)) {
      long n = PyLong_AsLong(fd);
      struct stat saved;
      if (n >= 0 && n <= INT_MAX && fstat((int)n, &saved) == 0) st = saved;
    }
    Py_XDECREF(fd);
    PyErr_Clear();
  }
  detail::installed().dev.store(st.st_dev);
  detail::installed().ino.store(st.st_ino);
  detail::installed().ok.store(true);
}

// forwarder_reader: the read end of fd 2's pipe when this process holds it
// (an in-process forwarder's), or -1. One fstat; the scan once per thread
// per fd-2 object (cached by st_dev, st_ino). Not for a signal handler
// (scan_reader is).
namespace detail {
// reader_of: forwarder_reader for fd 2's stat st, a pipe's.
inline int reader_of(const struct stat &st) {
  struct Cache { bool ok = false; dev_t dev = 0; ino_t ino = 0; int reader = -1; };
  static thread_local Cache c;
  if (!c.ok || !same(st, c.dev, c.ino)) c = Cache{true, st.st_dev, st.st_ino, scan_reader(st)};
  return c.reader;
}
}  // namespace detail
inline int forwarder_reader() {
  struct stat st;
  if (fstat(2, &st) != 0 || !S_ISFIFO(st.st_mode)) return -1;
  return detail::reader_of(st);
}

// now: what a call's first line finds fd 2 to be, with one system call:
// where fd 2 was a file (or /dev/null), still seekable (lseek: a pipe, a
// socket and a tty answer ESPIPE); where it was a tty, still that tty
// (tty_twin); else its fstat. Either way it is known whether fd 2 is a
// pipe an in-process forwarder drains (the call keeps its lines then: a
// file and a tty are none), and a File or a TTY so checked is written
// without another check (Now::checked). Lines after a call's first make
// their own check in try_write (a pipe and a socket none: their write goes
// to fd 2 itself).
inline Now now() {
  Now r;
  int k = detail::seen().load(std::memory_order_relaxed);
  if (k == (int)Kind::File && lseek(2, 0, SEEK_CUR) >= 0) {
    r.checked = true;
    r.kind = Kind::File;
    return r;
  }
  if (k == (int)Kind::TTY && (r.twin = detail::tty_twin()) >= 0) {
    r.checked = true;
    r.kind = Kind::TTY;
    return r;
  }
  struct stat st;
  if (fstat(2, &st) != 0) return r;
  r.kind = detail::see(st);
  r.checked = r.kind == Kind::File;
  r.forwarder = r.kind == Kind::Pipe && detail::reader_of(st) >= 0;
  return r;
}

// outliving_copy: when fd 2 is a pipe whose reader rd is in this process,
// a descriptor other than fd 2 and rd open on what fd 2 was at install, or
// -1 (none: the sink was installed after the capture began). Async-signal-
// safe: fstat and fcntl only.
inline int outliving_copy(int *rd) {
  struct stat st2;
  detail::Installed &in = detail::installed();
  if (!in.ok.load() || fstat(2, &st2) != 0 || !S_ISFIFO(st2.st_mode)) return -1;
  if (detail::same(st2, in.dev.load(), in.ino.load())) return -1;
  *rd = detail::scan_reader(st2);
  if (*rd < 0) return -1;
  for (int d = 0; d < kScanLimit; d++) {
    struct stat st;
    if (d != 2 && d != *rd && fstat(d, &st) == 0 && detail::same(st, in.dev.load(), in.ino.load())) return d;
  }
  return -1;
}

// write_to: b whole to fd, retrying EINTR; on EAGAIN it waits for room at
// most the room check's wait, then gives the rest up.
inline void write_to(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n > 0) { p += n; len -= (size_t)n; continue; }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      struct pollfd q = {fd, POLLOUT, 0};
      if (poll(&q, 1, kRoomWaitMs) > 0) continue;
    }
    return;
  }
}

// drain_to: what the pipe whose read end is rd holds, moved to out through
// a non-blocking second open of the read end (a forwarder reading at the
// same moment cannot leave this read waiting). Returns the bytes moved.
inline size_t drain_to(int rd, int out) {
  char path[32] = "/proc/self/fd/";  // by hand: snprintf is not async-signal-safe
  {
    char d[12];
    int k = 0;
    for (unsigned u = (unsigned)rd; k == 0 || u > 0; u /= 10) d[k++] = (char)('0' + u % 10);
    size_t n = strlen(path);
    while (k > 0) path[n++] = d[--k];
    path[n] = 0;
  }
  int tw = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (tw < 0) return 0;
  size_t moved = 0;
  char buf[4096];
  for (;;) {
    ssize_t n = read(tw, buf, sizeof buf);
    if (n > 0) { write_to(out, buf, (size_t)n); moved += (size_t)n; continue; }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  close(tw);
  return moved;
}

}  // namespace fd2

// ---------------------------------------------------------------- the interface

// Sink: what a binding's log lines go through. The binding calls enter()
// at the outermost entry of a binding call and exit() at its outermost
// exit (GIL held, no exception set), emit() for every line (any thread, GIL
// held or not; in_call() tells whether inside a call of this thread), and
// raise() to turn a native error's text into a Python exception.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual const char *name() const = 0;
  virtual void enter() = 0;
  // level: 'D', 'I', 'E', 'F' (Fatal: the runtime aborts after it returns).
  virtual void emit(char level, const std::string &line) = 0;
  // emit_fatal: a Fatal line from a crash handler, maybe in a signal
  // handler (logjam::fatal). A sink that is not async-signal-safe gets it
  // as emit('F', ...).
  virtual void emit_fatal(std::string_view line) { emit('F', std::string(line)); }
  // False with a Python exception set: the call raises it.
  virtual bool exit() = 0;
  // Sets type with text (possibly invalid UTF-8); GIL held.
  virtual void raise(PyObject *type, const std::string &text) { raise_escaped(type, text); }
  // Lines kept process-wide (logged outside any call); written at the next
  // outermost exit or at exit. False with the exception set.
  virtual bool flush_outside() { return true; }
  // fork(): the locks a sink owns are the ones a fork can leave held in the
  // child by a thread that is not there (CPython remakes its own, glibc
  // its stdio locks: docs/FACTS.md). before_fork takes them on the forking
  // thread, after_fork_parent lets them go, after_fork_child lets them go
  // in the child and drops what the parent will write itself.
  virtual void before_fork() {}
  virtual void after_fork_parent() {}
  virtual void after_fork_child() {}
};

namespace detail {
inline std::atomic<Sink *> &sink_slot() { static std::atomic<Sink *> s{nullptr}; return s; }
// The sink a fork's prepare handler took the locks of: the same one is let
// go after, whatever install() did meanwhile.
inline Sink *&forking_sink() { static Sink *s = nullptr; return s; }
inline void register_at_fork() {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork(
        [] { if ((forking_sink() = sink_slot().load())) forking_sink()->before_fork(); },
        [] { if (forking_sink()) forking_sink()->after_fork_parent(); },
        [] { if (forking_sink()) forking_sink()->after_fork_child(); });
  });
}
}  // namespace detail

// install makes s the process's sink (owned; never freed: a daemon thread
// may log until the process ends), with its at-fork handlers, and records
// what fd 2 is now (fd2::outliving_copy).
inline void install(Sink *s) {
  detail::register_at_fork();
  fd2::record_installed();
  detail::sink_slot().store(s);
}
inline Sink *sink() { return detail::sink_slot().load(); }

// enter: a binding call begins on this thread (GIL held).
inline void enter() {
  ThreadInfo &ti = identify();
  detail::ask_replaced();
  if (ti.depth++ == 0 && sink()) sink()->enter();
}

// leave: a binding call ends (GIL held, no exception set: fetch the call's
// own first). False with the exception the call must raise set.
inline bool leave() {
  ThreadInfo &ti = this_thread();
  if (--ti.depth > 0 || !sink()) return true;
  return sink()->exit();
}

// log: the runtime's log callback; line is complete, ends in '\n'.
inline void log(char level, const std::string &line) {
  if (Sink *s = sink()) s->emit(level, line);
  else fd2::direct(line);
}

// fatal: a crash handler's Fatal line (complete, ending in '\n'), from a
// signal handler or not (glog's and absl's failure signal handlers write
// theirs from one). With logjam's sink it is async-signal-safe (Logjam's
// fatal says what that covers); the runtime aborts after it returns.
inline void fatal(std::string_view line) {
  if (Sink *s = sink()) s->emit_fatal(line);
  else fd2::direct(line);
}

inline void raise(PyObject *type, const std::string &text) {
  if (Sink *s = sink()) s->raise(type, text);
  else raise_escaped(type, text);
}

// flush_outside: the process-wide kept lines, from an atexit callback
// (register atexit_callback) or any non-daemon point with the GIL held.
inline bool flush_outside() { return sink() ? sink()->flush_outside() : true; }

// ---------------------------------------------------------------- logjam

// Logjam: the sink. Rule names follow sim/policy's logjamSink.
class Logjam : public Sink {
  friend struct LogjamTestAccess;  // calibrate/headertest: holds mu_ from another thread
  struct Call {
    bool direct = false, stalled = false;
    bool asked = false;  // the call's first direct line asked what fd 2 is (fd2::now)
    KeepBuffer kept;
  };
  static Call &call() { static thread_local Call c; return c; }

  std::mutex mu_;  // guards outside_; taken by Held (or before_fork), which records its owner
  std::atomic<std::thread::id> mu_owner_{};
  // Held is mu_ held by this thread, its owner recorded: the fatal path
  // knows a lock its own thread holds (a signal handler that interrupted
  // it) from one another thread holds.
  struct Held {
    Logjam &l;
    explicit Held(Logjam &l) : l(l) { l.mu_.lock(); l.mu_owner_.store(std::this_thread::get_id()); }
    ~Held() { l.mu_owner_.store(std::thread::id()); l.mu_.unlock(); }
  };
  KeepBuffer outside_;  // lines logged outside a call that could not go to fd 2 (and a daemon's unwritten count)
  std::atomic<bool> fatal_wrote_{false};   // a fatal path has written (or left out) the kept lines
  std::atomic<bool> outside_kept_{false};  // outside_ is not empty: the exit's fast path skips mu_
  std::atomic<int> flushing_{0};           // flushes that have taken outside_'s lines and not yet written them
  // added_ counts the lines ever kept in outside_, taken_ the most of them
  // a flush took, written_ that count once no flush was in flight (mu_
  // guards the first two); a thread whose last line kept there is above
  // written_ is behind().
  uint64_t added_ = 0, taken_ = 0;
  std::atomic<uint64_t> written_{0};
  static uint64_t &last_added() { static thread_local uint64_t n = 0; return n; }
  bool behind() const { return last_added() > written_.load(); }

 public:
  // fork(): mu_ held by the forking thread across it, so no other thread
  // holds it in the child; the child's copy of the lines kept process-wide
  // is dropped (the parent writes them: written twice otherwise).
  // TestHeader Fork.* pins it.
  void before_fork() override { mu_.lock(); }
  void after_fork_parent() override { mu_.unlock(); }
  void after_fork_child() override {
    outside_.take();
    outside_kept_.store(false);
    flushing_.store(0);
    written_.store(added_);  // nothing of the child's is behind the parent's lines
    mu_.unlock();
  }

  const char *name() const override { return "logjam"; }
  void emit_fatal(std::string_view b) override { fatal(b); }

  // Enter: direct while sys.stderr is the original (or the daemon rule).
  void enter() override {
    Call &c = call();
    if (!c.kept.empty()) c.kept.take();
    c.stalled = false;
    c.asked = false;
    c.direct = !logjam::detail::replaced_seen().load() || daemon_rule();  // logjam::enter() just asked
    // This thread's own lines logged outside a call still wait in the
    // process-wide keep: the call keeps its lines too, and its outermost
    // exit writes the process-wide ones first, so the thread's lines reach
    // fd 2 in the order it logged them (Outside.ALineKeptOutsideACallGoes
    // BeforeTheThreadsNextCall).
    if (behind()) c.direct = false;
  }

  void emit(char level, const std::string &b) override {
    Call &c = call();
    if (level == 'F') { fatal(std::string_view(b)); return; }
    const bool inc = in_call();
    fd2::Now now;
    if (inc && c.direct && !c.asked) {
      // The call's first direct line asks what fd 2 is (one system call:
      // fd2::now). On an in-process forwarder's pipe the call keeps its
      // lines: the forwarder cannot drain them while the call holds the
      // GIL, and what it read meanwhile it holds, waiting for the GIL,
      // where a Fatal line's rescue cannot reach it
      // (Fatal.OnAForwardersPipeGoesToTheOutlivingCopy).
      c.asked = true;
      now = fd2::now();
      if (now.forwarder) c.direct = false;
    }
    if (inc && c.direct) {  // tryDirect, else stalled: keep
      if (fd2::try_direct(b, kRoomWaitMs, &now)) return;
      c.direct = false;
      c.stalled = true;
      c.kept.add(b);
      return;
    }
    if (inc && c.stalled) {  // re-check with no wait; on room, catch up and go direct
      // On a pipe the check is a try of the oldest kept line, not poll: a
      // one-page pipe holding anything is never writable to poll, yet takes
      // a line that fits.
      fd2::Kind k = fd2::kind();
      bool pipe = k == fd2::Kind::Pipe || k == fd2::Kind::Socket;
      if ((pipe || fd2::room_now()) && ftrylockfile(stderr) == 0) {
        if (catch_up_locked(c, pipe ? 0 : kRoomWaitMs)) {
          bool ok = fd2::write_line_bounded(b, kRoomWaitMs);
          funlockfile(stderr);
          if (ok) { c.direct = true; c.stalled = false; }
          else c.kept.add(b);
          return;
        }
        funlockfile(stderr);
      }
      c.kept.add(b);
      return;
    }
    if (inc) { c.kept.add(b); return; }  // sys.stderr replaced
    // Outside a call: never block while holding the GIL. Lines already
    // kept process-wide go first, and those a flush has taken and not yet
    // written too (it lets the GIL go before it takes the stdio lock): a
    // later line never overtakes them on fd 2.
    int wait = PyGILState_Check() ? 0 : kRoomWaitMs;
    bool backlog = outside_kept_.load() || flushing_.load() > 0;
    if (!backlog && !stderr_replaced() && fd2::try_direct(b, wait)) return;
    Held g(*this);
    outside_.add(b);
    last_added() = ++added_;
    outside_kept_.store(true);
    observer().kept_outside();
  }

  bool exit() override {
    ThreadInfo &ti = this_thread();
    if (call().kept.empty() && !outside_kept_.load()) {  // nothing to flush
      if (!ti.daemon) logjam::detail::ask_replaced();    // the answer a thread without the GIL reads
      return true;
    }
    if (!ti.daemon && !logjam::detail::ask_replaced()) {
      // One flush for the lines kept process-wide and the call's own,
      // under one hold of the stdio lock: two let the GIL be re-taken
      // between them, and an abort there (another thread's Fatal line)
      // killed the call's lines, still kept.
      Taken outside = outside_kept_.load() ? take_outside() : Taken();  // nothing kept: no lock
      Taken t = outside.then(call().kept.take());
      Exc e = t.empty() ? Exc() : flush_to(t, "outermost exit");  // re-raised as itself
      if (!outside.empty()) flushed();
      return finish(e);
    }
    Exc out;
    if (!ti.daemon && !flush_outside()) out = Exc::fetch();
    Taken t = call().kept.take();
    if (t.empty()) return finish(out);
    if (daemon_rule() || (ti.daemon && !stderr_replaced())) {  // a daemon never waits on fd 2
      daemon_direct(t);
      return finish(out);
    }
    if (ti.daemon) {
      observer().flush(t.lines.size(), t.note, "sys.stderr");
      if (!python_write(t.bytes())) {
        Exc e = Exc::fetch();
        daemon_direct(t);
        out.drop();
        return finish(e);
      }
      return finish(out);
    }
    Exc e = flush_to(t, "outermost exit");
    if (e.set()) { out.drop(); return finish(e); }  // re-raised as itself: the handler ran once
    return finish(out);
  }

  // flushOutside: a daemon thread leaves them to the next thread or the
  // exit (its flush could release the GIL while the interpreter finalizes).
  bool flush_outside() override {
    if (this_thread().daemon || !outside_kept_.load()) return true;
    Taken t = take_outside();
    if (t.empty()) return true;
    Exc e = flush_to(t, "next outermost exit");
    flushed();
    return finish(e);
  }

 private:
  // take_outside: the lines kept process-wide, counted in flushing_ (with
  // the take: a later outside line sees the backlog) until the caller has
  // written them and counts them down.
  Taken take_outside() {
    Held g(*this);
    Taken t = outside_.take();
    outside_kept_.store(false);
    if (!t.empty()) {
      flushing_++;
      taken_ = added_;
    }
    return t;
  }

  // flushed: a flush wrote what take_outside gave it; once none is in
  // flight, every line taken so far is written.
  void flushed() {
    Held g(*this);
    if (--flushing_ == 0) written_.store(taken_);
  }

  static bool finish(Exc &e) {
    if (!e.set()) return true;
    e.restore();
    return false;
  }

  // fatal: the lines kept process-wide (any thread's, logged outside a
  // call before the fatal line), then the call's kept lines, each as fd 2
  // takes it within the bound, then the fatal line: nothing runs after
  // the abort. The fatal path never waits for a flush in flight
  // (flushing_), which re-takes the GIL before it is done.
  //
  // A runtime's crash handler may call it from a signal handler (through
  // logjam::fatal), so it is async-signal-safe in what it does itself: it
  // allocates nothing (the kept lines are written in place, the note
  // formatted on the stack) and waits for no lock without a bound but the
  // stdio lock (recursive, as glibc's is: the thread it interrupted may
  // hold it). mu_ is tried for at most the room wait (another thread's),
  // never when this thread holds it (the signal interrupted it keeping a
  // line: it would wait for itself for ever); then the process-wide lines
  // are read as they are, unless the signal interrupted their change. The
  // call's kept lines too are left out when the signal interrupted their
  // own change (read torn otherwise). Fatal.FromASignalHandler* and row
  // F10 pin it. Only the first fatal line writes the kept lines.
  void fatal(std::string_view b) {
    fd2::detail::in_fatal().store(true);
    bool first = !fatal_wrote_.exchange(true);
    bool mine = mu_owner_.load() == std::this_thread::get_id();
    bool locked = first && !mine && lock_within(kRoomWaitMs);
    bool outside = locked || (first && mine && !outside_.changing());
    // call() only in a call: its first use on a thread constructs it.
    bool own = first && in_call() && !call().kept.changing();
    auto each = [&](auto &&f) {
      bool first = true;
      auto g = [&](std::string_view l, bool note) {
        bool outside_note = first && note;
        first = false;
        return f(l, outside_note);
      };
      if (outside && !outside_.each(g)) return;
      if (own) call().kept.each([&](std::string_view l, bool) { return g(l, false); });
    };
    int rd = -1;
    if (int out = fd2::outliving_copy(&rd); out >= 0) {  // fd 2 a forwarder's pipe: its saved copy outlives it
      size_t drained = fd2::drain_to(rd, out);
      size_t n = 0;
      each([&](std::string_view l, bool) { fd2::write_to(out, l.data(), l.size()); n++; return true; });
      fatal_flush_event(each, n, 0);
      observer().outliving_copy(out, drained);
      fd2::write_to(out, b.data(), b.size());
      unlock_outside(locked);
      return;
    }
    size_t all = 0;
    each([&](std::string_view, bool) { all++; return true; });
    if (all > 0) {
      size_t wrote = 0;
      fd2::Kind k = fd2::kind();
      if (k == fd2::Kind::Pipe || k == fd2::Kind::Socket) {  // each line tried within the bound
        flockfile(stderr);
        each([&](std::string_view l, bool) {
          if (!fd2::write_line_bounded(l, kRoomWaitMs)) return false;
          wrote++;
          return true;
        });
        funlockfile(stderr);
      } else {  // a terminal or a file: written, blocking (a stalled terminal reads again once a write waits)
        each([&](std::string_view l, bool) {
          if (!fd2::room(kRoomWaitMs)) return false;
          fd2::direct(l);
          wrote++;
          return true;
        });
      }
      fatal_flush_event(each, wrote, all - wrote);
    }
    unlock_outside(locked);
    fd2::direct(b);
  }

  // lock_within takes mu_ within ms, polling (try_lock and nanosleep:
  // no timed wait in a signal handler).
  bool lock_within(int ms) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
      if (mu_.try_lock()) return true;
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >= ms) return false;
      struct timespec d = {0, 1000000};
      nanosleep(&d, nullptr);
    }
  }
  void unlock_outside(bool held) {
    if (!held) return;
    outside_kept_.store(false);
    mu_.unlock();
  }

  // fatal_flush_event: the observer's record of the kept lines the fatal
  // path wrote (not the process-wide note), built only when an observer
  // is set (calibrate's telemetry): a binding's fatal path allocates nothing.
  template <class Each>
  static void fatal_flush_event(Each &each, size_t wrote, size_t left) {
    if (!observed()) return;
    std::vector<std::string> w;
    size_t i = 0;
    each([&](std::string_view l, bool outside_note) {
      if (i++ >= wrote) return false;
      if (!outside_note) w.emplace_back(l);
      return true;
    });
    observer().fatal_flush(w, left);
  }

  // catchUpLocked: the kept lines (note first) as fd 2 takes them within
  // the bound, each whole; what does not go out is kept again, in order.
  static bool catch_up_locked(Call &c, int first_ms) {
    Taken t = c.kept.take();
    auto all = t.all();
    observer().fallback(t.lines.size(), "room again after a stall");
    size_t wrote = write_each_bounded(all, first_ms);
    for (size_t j = wrote; j < all.size(); j++) c.kept.add(all[j]);
    return wrote == all.size();
  }

  // write_each_bounded: lines, oldest first, each as fd 2 takes it within
  // the bound (the first's is first_ms), never half of one; returns how
  // many went out. A line is tried, not only fd 2 polled (a one-page pipe
  // holding anything is never writable to poll). Stdio lock held.
  static size_t write_each_bounded(const std::vector<std::string> &all, int first_ms) {
    for (size_t i = 0; i < all.size(); i++) {
      if (!fd2::write_line_bounded(all[i], i == 0 ? first_ms : kRoomWaitMs)) return i;
    }
    return all.size();
  }

  // daemonDirect: a daemon's lines while fd 2 has room; the rest counted
  // for the note.
  void daemon_direct(const Taken &t) {
    auto left = fd2::direct_while_room(t.all());
    if (left.first > 0) {
      Held g(*this);
      outside_.count(left.first, left.second);
      outside_kept_.store(true);
    }
  }

  // flushTo: to fd 2 (write_released, a Ctrl-C there raised after the
  // call) while sys.stderr is the original, else a Python write; if that
  // raises, the lines go to fd 2 and its exception is returned as itself.
  static Exc flush_to(const Taken &t, const char *why) {
    if (!logjam::detail::ask_replaced()) {  // GIL held
      observer().flush(t.lines.size(), t.note, "fd 2 (sys.stderr is the original)");
      observer().fallback(t.lines.size(), why);
      return fd2::write_released(t.all(), true);
    }
    observer().flush(t.lines.size(), t.note, "sys.stderr");
    if (python_write(t.bytes())) return Exc();
    Exc e = Exc::fetch();
    observer().fallback(t.lines.size(), why);
    Exc ignored = fd2::write_released(t.all(), false);
    ignored.drop();
    return e;
  }
};

// ---------------------------------------------------------------- bindings

// atexit_callback: register with Python's atexit (atexit.register) so lines
// kept outside any call are written at exit.
inline PyObject *atexit_callback(PyObject *, PyObject *) {
  if (!flush_outside()) return NULL;
  Py_RETURN_NONE;
}

#if defined(PYBIND11_VERSION_MAJOR)
// pybind11_call runs f as one binding call (GIL held): logjam::enter, f,
// logjam::leave; an exception the sink's exit sets is thrown as
// pybind11::error_already_set after f's own result or exception.
template <typename F>
auto pybind11_call(F &&f) -> decltype(f()) {
  enter();
  try {
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      if (!leave()) throw ::pybind11::error_already_set();
    } else {
      auto r = f();
      if (!leave()) throw ::pybind11::error_already_set();
      return r;
    }
  } catch (::pybind11::error_already_set &) {
    throw;
  } catch (...) {
    // f threw: the call's exit still runs; f's exception wins unless the
    // exit raised a KeyboardInterrupt.
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    bool ok = leave();
    if (!ok && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
      Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
      throw ::pybind11::error_already_set();
    }
    if (!ok) PyErr_Clear();
    PyErr_Restore(et, ev, tb);
    throw;
  }
}
#endif

}  // namespace logjam
