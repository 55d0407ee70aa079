// logjamext: a small CPython extension that does, at the C-API level, what
// each log-sink policy of SCENARIOS.md does, so real interpreters can play
// the matrix's rows. Built by calibrate/build.go (g++ -shared, no setuptools).
//
// Every binding call holds the GIL throughout (no release), as ExecuTorch's
// bindings do. The "backend" has its own std::mutex L and logs while
// holding it (D1). Telemetry goes to the fd named by setup() as JSON lines
// in the wire format of cmd/simrt (sim/runtime.go, sim/policy.go).
//
// pystderr is the real pre-fix sink: std::cerr with unitbuf whose rdbuf is
// a pybind11-pythonbuf-like streambuf (pybind11/iostream.h, 2.10): a
// 1024-byte put area; sync() takes the GIL, keeps an incomplete UTF-8 tail,
// decodes the rest strictly into a str, calls sys.stderr.write then
// sys.stderr.flush, and throws a C++ exception when either raises. pybind11
// itself is not used (PyPI is unreachable; Debian's 2.10.3 predates 3.12 /
// 3.13 support): this streambuf is written after its source.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <fcntl.h>
#include <iostream>
#include <mutex>
#include <poll.h>
#include <signal.h>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace {

enum Policy { PYSTDERR, FD2, BUFFERED, ADAPTIVE, MERGED, LOGJAM };
Policy g_policy = FD2;
int g_tel = -1;
std::mutex g_tel_mu;
std::atomic<int> g_seq{0};
std::mutex g_clock_mu;
long long g_last_us = -1;
std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();
std::atomic<int> g_sigint_arrivals{0};
struct sigaction g_py_sigint;
const size_t kKeepCap = 64 * 1024, kKeepLow = 32 * 1024;
const int kRoomWaitMs = 100;

// ---------------------------------------------------------------- telemetry

const char *b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::string &in) {
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += b64[v >> 18 & 63]; out += b64[v >> 12 & 63]; out += b64[v >> 6 & 63]; out += b64[v & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += b64[v >> 18 & 63]; out += b64[v >> 12 & 63]; out += "==";
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += b64[v >> 18 & 63]; out += b64[v >> 12 & 63]; out += b64[v >> 6 & 63]; out += '=';
  }
  return out;
}

// jstr quotes s as a JSON string (s is text we produced: ASCII or UTF-8).
std::string jstr(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
    else if (c < 0x20 || c >= 0x80) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += (char)c;
  }
  return o + "\"";
}

double ms_since_start() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_start).count();
}

void tel_raw(const std::string &line) {
  if (g_tel < 0) return;
  std::lock_guard<std::mutex> g(g_tel_mu);
  const char *p = line.data();
  size_t n = line.size();
  while (n > 0) {
    ssize_t w = write(g_tel, p, n);
    if (w < 0) { if (errno == EINTR) continue; return; }
    p += w; n -= (size_t)w;
  }
}

// emit writes {"ev":ev, fields..., "t":ms}; fields is "" or `"k":v,...`.
void emit(const char *ev, const std::string &fields) {
  if (g_tel < 0) return;
  char t[64];
  snprintf(t, sizeof t, "\"t\":%.3f", ms_since_start());
  tel_raw(std::string("{\"ev\":") + jstr(ev) + "," + (fields.empty() ? "" : fields + ",") + t + "}\n");
}

long gettid_() { return syscall(SYS_gettid); }

// ---------------------------------------------------------------- threads

struct ThreadState {
  int depth = 0;
  bool direct = false, stalled = false;
  std::deque<std::string> kept;
  size_t kept_bytes = 0;
  long dropped_n = 0, dropped_b = 0;
  std::string errs;            // the call's Error lines, up to 1024 bytes
  bool has_err = false;        // a native error (THROW_IF_ERROR) is pending
  std::string err_type, err_msg;
  bool named = false;
  std::string name;
  bool daemon = false;
};
thread_local ThreadState ts;

void name_thread() {  // GIL held
  if (ts.named) return;
  ts.named = true;
  ts.name = "?";
  PyObject *threading = PyImport_ImportModule("threading");
  if (!threading) { PyErr_Clear(); return; }
  PyObject *t = PyObject_CallMethod(threading, "current_thread", NULL);
  Py_DECREF(threading);
  if (!t) { PyErr_Clear(); return; }
  PyObject *n = PyObject_GetAttrString(t, "name");
  if (n && PyUnicode_Check(n)) {
    const char *s = PyUnicode_AsUTF8(n);
    if (s) ts.name = s;
  }
  Py_XDECREF(n);
  PyObject *d = PyObject_GetAttrString(t, "daemon");
  if (d) ts.daemon = PyObject_IsTrue(d) == 1;
  Py_XDECREF(d);
  Py_DECREF(t);
  PyErr_Clear();
}

bool stderr_replaced() {  // GIL held
  return PySys_GetObject("stderr") != PySys_GetObject("__stderr__");
}

// ---------------------------------------------------------------- text rules

size_t valid_prefix_len(const std::string &b) {  // trims an incomplete UTF-8 tail
  size_t i = b.size();
  size_t k = 0;
  while (k < 3 && i > 0 && ((unsigned char)b[i - 1] & 0xc0) == 0x80) { i--; k++; }
  if (i == 0) return b.size();
  unsigned char lead = (unsigned char)b[i - 1];
  size_t need;
  if (lead < 0x80) return b.size();
  else if ((lead & 0xe0) == 0xc0) need = 2;
  else if ((lead & 0xf0) == 0xe0) need = 3;
  else if ((lead & 0xf8) == 0xf0) need = 4;
  else return b.size();
  if (b.size() - (i - 1) < need) return i - 1;
  return b.size();
}

std::string cstr(const std::string &b) { size_t z = b.find('\0'); return z == std::string::npos ? b : b.substr(0, z); }

std::string stamp() {
  std::lock_guard<std::mutex> g(g_clock_mu);
  long long us = (long long)std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - g_start).count();
  if (us <= g_last_us) us = g_last_us + 1;
  g_last_us = us;
  long long sec = us / 1000000;
  char b[64];
  snprintf(b, sizeof b, "%02lld:%02lld:%02lld.%06lld", sec / 3600, sec / 60 % 60, sec % 60, us % 1000000);
  return b;
}

std::string note(long n, long b) {
  return "executorch: " + std::to_string(n) + " lines (" + std::to_string(b) + " bytes) left out\n";
}

// ---------------------------------------------------------------- fd 2

std::atomic<long> g_direct_tid{0};  // the thread in a direct write (GIL kept)

// fd_write_all: logjam's own write(2) loop on fd 2, retrying EINTR and
// short writes (the stdio lock is held by the caller).
void fd_write_all(const std::string &b) {
  size_t off = 0;
  while (off < b.size()) {
    ssize_t n = write(2, b.data() + off, b.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += (size_t)n;
  }
}

// direct: C stdio, stdio lock held, GIL kept if held, blocks while fd 2 has
// no room. glibc's fwrite on unbuffered stderr does not retry EINTR;
// logjam's write loop does (sim/policy: fdWrite).
void direct_write(const std::string &b) {
  g_direct_tid.store(gettid_());
  if (g_policy == LOGJAM) {
    flockfile(stderr);
    fd_write_all(b);
    funlockfile(stderr);
  } else {
    fwrite(b.data(), 1, b.size(), stderr);
  }
  g_direct_tid.store(0);
}

// nowait_write: a write to fd 2 that never blocks: pwritev2(RWF_NOWAIT)
// (Linux: a pipe takes what fits now, without O_NONBLOCK on the shared
// file description); where that is refused, a plain write. Returns the
// bytes taken (0 when fd 2 has no room), the whole length on an error (the
// line is given up, as fwrite would).
size_t nowait_write(const char *p, size_t len) {
  static std::atomic<bool> plain{false};
  for (;;) {
    struct iovec v = {(void *)p, len};
    ssize_t n = plain.load() ? write(2, p, len) : pwritev2(2, &v, 1, -1, RWF_NOWAIT);
    if (n >= 0) return (size_t)n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return 0;
    if (!plain.load() && (errno == EOPNOTSUPP || errno == EINVAL || errno == ESPIPE)) { plain.store(true); continue; }
    return len;
  }
}

bool room_check(int wait_ms);

// write_bounded is logjam's room check that does not serialise writer and
// reader (sim/policy: writeBounded): a non-blocking write first; only when
// fd 2 took nothing (or not all) a wait for room bounded by wait_ms, then a
// write again. Returns the bytes that went out. Stdio lock held.
size_t write_bounded(const std::string &b, int wait_ms) {
  size_t n = nowait_write(b.data(), b.size());
  if (n == b.size()) return n;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (n < b.size()) {
    int left = (int)std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (!room_check(left < 0 ? 0 : left)) return n;
    size_t m = nowait_write(b.data() + n, b.size() - n);
    if (m == 0) {
      if (std::chrono::steady_clock::now() >= deadline) return n;
      struct timespec t = {0, 1000000};  // room reported that the write did not find: look again shortly
      nanosleep(&t, nullptr);
    }
    n += m;
  }
  return n;
}

// write_line_bounded: write_bounded, and a line fd 2 took only part of is
// finished before the stdio lock is let go (never half a line on fd 2).
// Returns false when fd 2 took nothing. Stdio lock held.
bool write_line_bounded(const std::string &b, int wait_ms) {
  g_direct_tid.store(gettid_());
  size_t n = write_bounded(b, wait_ms);
  if (0 < n && n < b.size()) fd_write_all(b.substr(n));
  g_direct_tid.store(0);
  return n > 0;
}

// try_direct: logjam writes a line to fd 2 only if the stdio lock is free
// and fd 2 takes it within wait_ms (sim/policy: tryDirect).
bool try_direct(const std::string &b, int wait_ms) {
  if (ftrylockfile(stderr) != 0) return false;
  bool ok = write_line_bounded(b, wait_ms);
  funlockfile(stderr);
  return ok;
}

bool fd2_is_pipe() {
  struct stat st;
  return fstat(2, &st) == 0 && S_ISFIFO(st.st_mode);
}

// room: fd 2 a pipe -> poll POLLOUT up to wait_ms (EINTR: poll again for
// the time left); not a pipe -> room.
bool room_check(int wait_ms) {
  if (!fd2_is_pipe()) return true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    int left = (int)std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left < 0) left = 0;
    struct pollfd p = {2, POLLOUT, 0};
    int r = poll(&p, 1, left);
    if (r > 0) return (p.revents & POLLOUT) != 0 || (p.revents & (POLLERR | POLLHUP)) != 0;
    if (r == 0) return false;
    if (errno != EINTR) return true;
  }
}

// ---------------------------------------------------------------- python write

// python_write: text decoded (escaped) to sys.stderr.write then .flush, GIL
// held. Returns false with the exception left set.
bool python_write_escaped(const std::string &b) {
  PyObject *text = PyUnicode_DecodeUTF8(b.data(), (Py_ssize_t)b.size(), "backslashreplace");
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

// ---------------------------------------------------------------- pythonbuf

struct py_error : std::runtime_error { py_error() : std::runtime_error("error_already_set") {} };

// pythonbuf after pybind11/iostream.h (2.10): put area of 1024 bytes; sync
// and overflow write the complete UTF-8 prefix through sys.stderr (GIL
// taken) and throw when Python raised.
class pythonbuf : public std::streambuf {
  char d_buffer[1024];
  int overflow(int c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return _sync() == 0 ? traits_type::not_eof(c) : traits_type::eof();
  }
  size_t utf8_remainder() const {
    const char *rbase = pptr() - 1;
    const char *rpend = pbase() - 1;
    const char *rpptr = pptr();
    const char *leading = rbase;
    while (leading != rpend && ((unsigned char)*leading & 0xc0) == 0x80) leading--;
    if (leading == rpend) return 0;
    unsigned char c = (unsigned char)*leading;
    size_t dist = (size_t)(rpptr - leading);
    if ((c & 0x80) == 0x00) return 0;
    if ((c & 0xe0) == 0xc0 && dist < 2) return dist;
    if ((c & 0xf0) == 0xe0 && dist < 3) return dist;
    if ((c & 0xf8) == 0xf0 && dist < 4) return dist;
    return 0;
  }
  int _sync() {
    if (pbase() != pptr()) {
      PyGILState_STATE g = PyGILState_Ensure();
      size_t size = (size_t)(pptr() - pbase());
      size_t remainder = utf8_remainder();
      bool failed = false;
      if (size > remainder) {
        PyObject *line = PyUnicode_FromStringAndSize(pbase(), (Py_ssize_t)(size - remainder));  // strict
        if (!line) failed = true;
        else {
          PyObject *err = PySys_GetObject("stderr");
          Py_XINCREF(err);
          PyObject *r = err ? PyObject_CallMethod(err, "write", "O", line) : NULL;
          Py_DECREF(line);
          if (!r) failed = true;
          else {
            Py_DECREF(r);
            r = PyObject_CallMethod(err, "flush", NULL);
            if (!r) failed = true; else Py_DECREF(r);
          }
          Py_XDECREF(err);
        }
      }
      if (remainder > 0) memmove(pbase(), pptr() - remainder, remainder);
      setp(pbase(), epptr());
      pbump((int)remainder);
      if (failed) {
        emit("pythonbuf-throws", "\"thread\":" + jstr(ts.name));
        PyErr_Clear();  // pybind11 moves it into error_already_set
        PyGILState_Release(g);
        throw py_error();
      }
      PyGILState_Release(g);
    }
    return 0;
  }
  int sync() override { return _sync(); }

 public:
  pythonbuf() { setp(d_buffer, d_buffer + sizeof(d_buffer) - 1); }
};
pythonbuf *g_pybuf = nullptr;

// ---------------------------------------------------------------- keep

void keep(const std::string &b) {
  ts.kept.push_back(b);
  ts.kept_bytes += b.size();
  if (ts.kept_bytes > kKeepCap) {
    while (ts.kept_bytes > kKeepLow && ts.kept.size() > 1) {
      ts.dropped_n++;
      ts.dropped_b += (long)ts.kept.front().size();
      ts.kept_bytes -= ts.kept.front().size();
      ts.kept.pop_front();
    }
  }
}

struct Taken {
  std::string note;
  std::vector<std::string> lines;
  bool empty() const { return note.empty() && lines.empty(); }
  std::string bytes() const { std::string b = note; for (auto &l : lines) b += l; return b; }
  std::vector<std::string> all() const { std::vector<std::string> a; if (!note.empty()) a.push_back(note); a.insert(a.end(), lines.begin(), lines.end()); return a; }
};

Taken take() {
  Taken t;
  if (ts.dropped_n > 0) t.note = note(ts.dropped_n, ts.dropped_b);
  t.lines.assign(ts.kept.begin(), ts.kept.end());
  ts.kept.clear(); ts.kept_bytes = 0; ts.dropped_n = 0; ts.dropped_b = 0;
  return t;
}

void direct_all(const Taken &t, const char *why) {
  emit("fallback", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(t.lines.size()) + ",\"why\":" + jstr(why));
  for (auto &l : t.all()) direct_write(l);
}

// direct_while_room returns the count and bytes not written.
std::pair<long, long> direct_while_room(const Taken &t, size_t *written_lines) {
  auto all = t.all();
  size_t wrote = 0;
  for (size_t i = 0; i < all.size(); i++) {
    if (!room_check(kRoomWaitMs)) {
      long n = 0, b = 0;
      for (size_t j = i; j < all.size(); j++) { n++; b += (long)all[j].size(); }
      if (written_lines) *written_lines = wrote > 0 && !t.note.empty() ? wrote - 1 : wrote;
      return {n, b};
    }
    direct_write(all[i]);
    wrote++;
  }
  if (written_lines) *written_lines = t.lines.size();
  return {0, 0};
}

bool flush_escaped(const Taken &t) {
  emit("flush", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(t.lines.size()));
  return python_write_escaped(t.bytes());
}

// process-wide lines logjam keeps outside a call (GIL held when touched)
std::deque<std::string> g_outside;
long g_outside_bytes = 0, g_lost_n = 0, g_lost_b = 0;

bool daemon_rule() {
  if (!ts.daemon) return false;
  if (g_policy == ADAPTIVE) return true;
  return PY_VERSION_HEX < 0x030D08F0;  // merged/logjam: Linux, Python < 3.13.8
}

// ---------------------------------------------------------------- the sinks

// room_now: a stalled call's re-check with no wait: a pipe's room check, a
// terminal's POLLOUT, a file always (sim/policy: roomNow).
bool room_now() {
  if (isatty(2)) {
    struct pollfd p = {2, POLLOUT, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & POLLOUT);
  }
  return room_check(0);
}

// catch_up_locked writes the call's kept lines (the note first) as fd 2
// takes them within the bound, each line whole; what does not go out is
// kept again, in order. Returns whether everything was written (sim/policy:
// catchUpLocked). Stdio lock held.
bool catch_up_locked() {
  Taken t = take();
  auto all = t.all();
  emit("fallback", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(t.lines.size()) + ",\"why\":\"room again after a stall\"");
  for (size_t i = 0; i < all.size(); i++) {
    if (!write_line_bounded(all[i], kRoomWaitMs)) {
      for (size_t j = i; j < all.size(); j++) keep(all[j]);
      return false;
    }
  }
  return true;
}

void sink_enter() {
  ts.kept.clear(); ts.kept_bytes = 0; ts.dropped_n = ts.dropped_b = 0;
  ts.stalled = false;
  ts.direct = !stderr_replaced() || (g_policy >= ADAPTIVE && daemon_rule());
}

void sink_emit(char level, int seq, const std::string &b) {
  switch (g_policy) {
    case PYSTDERR:
      std::cerr << b;  // unitbuf: the sentry's destructor syncs (noexcept)
      return;
    case FD2:
      direct_write(b);
      return;
    case BUFFERED:
      if (level == 'F' || ts.depth == 0) direct_write(b);
      else keep(b);
      return;
    default: break;
  }
  // adaptive, merged, logjam
  if (level == 'F') {
    if (g_policy != ADAPTIVE && ts.depth > 0) {
      Taken t = take();
      size_t wrote = 0;
      auto left = direct_while_room(t, &wrote);
      std::string w = "[";
      for (size_t i = 0; i < wrote && i < t.lines.size(); i++) w += (i ? ",\"" : "\"") + base64(t.lines[i]) + "\"";
      w += "]";
      emit("fatal-flush", "\"thread\":" + jstr(ts.name) + ",\"fatal\":" + std::to_string(seq) + ",\"written\":" + w + ",\"left\":" + std::to_string(left.first));
    }
    direct_write(b);
    return;
  }
  if (g_policy == LOGJAM && ts.depth > 0 && ts.stalled) {
    if (room_now() && ftrylockfile(stderr) == 0) {
      if (catch_up_locked()) {
        bool ok = write_line_bounded(b, kRoomWaitMs);
        funlockfile(stderr);
        if (ok) { ts.direct = true; ts.stalled = false; }
        else keep(b);
        return;
      }
      funlockfile(stderr);
    }
    keep(b);
    return;
  }
  if (ts.depth == 0) {
    if (g_policy == LOGJAM) {
      if (!stderr_replaced() && try_direct(b, PyGILState_Check() ? 0 : kRoomWaitMs)) return;
      g_outside.push_back(b); g_outside_bytes += (long)b.size();
      return;
    }
    direct_write(b);
    return;
  }
  if (ts.direct) {
    if (g_policy == LOGJAM) {
      if (try_direct(b, kRoomWaitMs)) return;
    } else if (room_check(kRoomWaitMs)) {
      direct_write(b);
      return;
    }
    ts.direct = false; ts.stalled = true;
    keep(b);
    return;
  }
  keep(b);
}

// write_released: logjam writes kept lines to fd 2 at an outermost exit
// with the GIL released (a forwarder that needs it can drain fd 2) and the
// stdio lock held; a Ctrl-C meanwhile stays pending (sim/policy:
// writeReleased).
void write_released(const Taken &t, const char *why) {
  Py_BEGIN_ALLOW_THREADS
  flockfile(stderr);
  direct_all(t, why);
  funlockfile(stderr);
  Py_END_ALLOW_THREADS
}

// flush_to: logjam's flush at an outermost exit: to fd 2 (write_released)
// while sys.stderr is the original, else through it; if that raises, the
// lines go to fd 2 and false is returned with the exception set, to be
// re-raised as itself (sim/policy: flushTo).
bool flush_to(const Taken &t, const char *why) {
  if (!stderr_replaced()) {
    emit("flush", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(t.lines.size()) + ",\"to\":\"fd 2 (sys.stderr is the original)\"");
    write_released(t, why);
    return true;
  }
  if (flush_escaped(t)) return true;
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);
  write_released(t, why);
  PyErr_Restore(et, ev, tb);
  return false;
}

// flush_outside: the process-wide kept lines (flush_to); false with the
// exception set if the flush raised. GIL held.
bool flush_outside() {
  Taken t;
  if (g_lost_n > 0) t.note = note(g_lost_n, g_lost_b);
  t.lines.assign(g_outside.begin(), g_outside.end());
  g_outside.clear(); g_outside_bytes = 0; g_lost_n = g_lost_b = 0;
  if (t.empty()) return true;
  return flush_to(t, "next outermost exit");
}

bool is_ki(PyObject *et) { return et && PyErr_GivenExceptionMatches(et, PyExc_KeyboardInterrupt); }

// sink_exit: at the outermost exit, GIL held, no exception set. Returns an
// exception (fetched triple in *e) to raise after the call, if any.
struct Exc { PyObject *t = nullptr, *v = nullptr, *tb = nullptr; bool set() const { return t != nullptr; } };

Exc fetch() { Exc e; PyErr_Fetch(&e.t, &e.v, &e.tb); return e; }
void drop(Exc &e) { Py_XDECREF(e.t); Py_XDECREF(e.v); Py_XDECREF(e.tb); e = Exc(); }

// logjam_exit is sim/policy's logjamSink.Exit: the process-wide lines
// first (not from a daemon thread), then the call's: a daemon writes while
// fd 2 has room and counts the rest; otherwise flush_to, its exception
// re-raised as itself.
Exc logjam_exit() {
  Exc none, out;
  if (!ts.daemon && !flush_outside()) out = fetch();
  Taken t = take();
  if (t.empty()) return out;
  auto daemon_direct = [&] {
    auto left = direct_while_room(t, nullptr);
    if (left.first > 0) { g_lost_n += left.first; g_lost_b += left.second; }
  };
  if (daemon_rule() || (ts.daemon && !stderr_replaced())) { daemon_direct(); return out; }
  if (ts.daemon) {
    if (!flush_escaped(t)) { Exc e = fetch(); daemon_direct(); drop(out); return e; }
    return out;
  }
  if (!flush_to(t, "outermost exit")) { drop(out); return fetch(); }
  return out;
}

Exc sink_exit() {
  Exc none;
  switch (g_policy) {
    case PYSTDERR: case FD2: return none;
    case BUFFERED: {
      Exc saved;
      if (PyErr_CheckSignals() < 0) saved = fetch();
      Taken t = take();
      if (t.empty()) return saved;
      if (!flush_escaped(t)) {
        Exc err = fetch();
        emit("flush-raised", "\"thread\":" + jstr(ts.name));
        if (is_ki(err.t) && !saved.set()) return err;  // counted as written
        drop(err);
        direct_all(t, "flush raised");
      }
      return saved;
    }
    default: break;
  }
  if (g_policy == LOGJAM) return logjam_exit();
  Taken t = take();
  if (t.empty()) return none;
  if (daemon_rule()) {
    auto left = direct_while_room(t, nullptr);
    if (left.first > 0) {
      if (g_policy == LOGJAM) { g_lost_n += left.first; g_lost_b += left.second; }
      else emit("dropped", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(left.first) + ",\"bytes\":" + std::to_string(left.second));
    }
    return none;
  }
  if (!flush_escaped(t)) {
    Exc err = fetch();
    direct_all(t, "flush raised");
    if (g_policy == LOGJAM) return err;  // re-raised as itself
    bool ki = is_ki(err.t);
    drop(err);
    if (ki) { emit("set-interrupt", ""); PyErr_SetInterrupt(); }  // replayed after the call
  }
  return none;
}

// exception text: THROW_IF_ERROR's 127-byte cut, the call's Error lines.
void raise_native(const std::string &type, const std::string &formatted) {
  std::string main = cstr(formatted.substr(0, std::min<size_t>(formatted.size(), 127)));
  std::string full = main;
  if (!ts.errs.empty()) full += "\n" + ts.errs;
  PyObject *exc = type == "IndexError" ? PyExc_IndexError : PyExc_RuntimeError;
  if (g_policy <= BUFFERED) {
    PyErr_SetString(exc, full.c_str());  // pybind11: strict, version-dependent
    return;
  }
  PyObject *text = nullptr;
  if (g_policy == ADAPTIVE) {
    // the appended errors escaped, then the whole text decoded strictly (a
    // main text cut inside a character meets the separator: "invalid
    // continuation byte"), as sim/policy's adaptive does
    std::string whole = main;
    if (!ts.errs.empty()) {
      PyObject *a = PyUnicode_DecodeUTF8(ts.errs.data(), (Py_ssize_t)ts.errs.size(), "backslashreplace");
      if (!a) return;
      const char *u = PyUnicode_AsUTF8(a);
      whole += "\n" + std::string(u ? u : "");
      Py_DECREF(a);
    }
    text = PyUnicode_DecodeUTF8(whole.data(), (Py_ssize_t)whole.size(), "strict");
  } else {
    text = PyUnicode_DecodeUTF8(full.data(), (Py_ssize_t)full.size(), "backslashreplace");
  }
  if (!text) return;
  PyErr_SetObject(exc, text);
  Py_DECREF(text);
}

// ---------------------------------------------------------------- ET_LOG

void et_log(char level, const std::string &file, int lineno, const std::string &msg_in) {  // GIL held
  name_thread();
  std::string msg = msg_in.substr(0, std::min<size_t>(msg_in.size(), 255));
  msg = cstr(msg.substr(0, valid_prefix_len(msg)));
  int seq = ++g_seq;
  std::string b = std::string(1, level) + " " + stamp() + " executorch:" + file + ":" + std::to_string(lineno) + "] " + msg + "\n";
  if (level == 'E' && ts.depth > 0 && ts.errs.size() < 1024) {
    std::string add = msg + "\n";
    ts.errs += add.substr(0, std::min<size_t>(add.size(), 1024 - ts.errs.size()));
  }
  if (g_tel >= 0)
    emit("line", "\"seq\":" + std::to_string(seq) + ",\"thread\":" + jstr(ts.name) + ",\"daemon\":" + (ts.daemon ? "true" : "false") +
                   ",\"level\":\"" + std::string(1, level) + "\",\"in_call\":" + (ts.depth > 0 ? "true" : "false") +
                   ",\"replaced\":" + (stderr_replaced() ? "true" : "false") + ",\"b\":\"" + base64(b) + "\"");
  sink_emit(level, seq, b);
  if (level == 'F') {
    emit("abort", "\"why\":\"fatal log line\"");
    abort();
  }
}

std::mutex g_backend_L;
std::atomic<int> g_b_step{0};  // 1: B is about to take L, 2: B got it
std::atomic<long> g_b_tid{0};

// ---------------------------------------------------------------- module

PyObject *m_setup(PyObject *, PyObject *args) {
  const char *pol;
  int fd;
  if (!PyArg_ParseTuple(args, "si", &pol, &fd)) return NULL;
  std::string p = pol;
  if (p == "pystderr") g_policy = PYSTDERR;
  else if (p == "fd2") g_policy = FD2;
  else if (p == "buffered") g_policy = BUFFERED;
  else if (p == "adaptive") g_policy = ADAPTIVE;
  else if (p == "merged") g_policy = MERGED;
  else if (p == "logjam") g_policy = LOGJAM;
  else { PyErr_Format(PyExc_ValueError, "unknown policy %s", pol); return NULL; }
  g_tel = fd;
  if (g_policy == PYSTDERR && !g_pybuf) {
    g_pybuf = new pythonbuf();
    std::cerr.rdbuf(g_pybuf);
    std::cerr.setf(std::ios::unitbuf);
  }
  Py_RETURN_NONE;
}

PyObject *m_emit(PyObject *, PyObject *args) {  // a JSON object's text, one line
  const char *s;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "s#", &s, &n)) return NULL;
  std::string line(s, (size_t)n);
  Py_BEGIN_ALLOW_THREADS
  tel_raw(line + "\n");
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

PyObject *m_log(PyObject *, PyObject *args) {
  const char *lvl, *file;
  int lineno;
  const char *msg;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "ssiy#", &lvl, &file, &lineno, &msg, &n)) return NULL;
  et_log(lvl[0], file, lineno, std::string(msg, (size_t)n));
  Py_RETURN_NONE;
}

PyObject *m_fail(PyObject *, PyObject *args) {  // THROW_IF_ERROR inside a call
  const char *type, *msg;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "sy#", &type, &msg, &n)) return NULL;
  ts.has_err = true;
  ts.err_type = type;
  ts.err_msg.assign(msg, (size_t)n);
  Py_RETURN_NONE;
}

// call(fn, *args): a binding call (GIL held throughout).
PyObject *m_call(PyObject *, PyObject *args) {
  Py_ssize_t n = PyTuple_Size(args);
  if (n < 1) { PyErr_SetString(PyExc_TypeError, "call(fn, *args)"); return NULL; }
  name_thread();
  PyObject *fn = PyTuple_GetItem(args, 0);
  PyObject *rest = PyTuple_GetSlice(args, 1, n);
  ts.depth++;
  if (ts.depth == 1) { ts.errs.clear(); sink_enter(); }
  ts.has_err = false;
  PyObject *r = PyObject_Call(fn, rest, NULL);
  Py_DECREF(rest);
  Exc exc;
  if (!r) exc = fetch();
  else if (ts.has_err) {
    ts.has_err = false;
    Py_CLEAR(r);
    raise_native(ts.err_type, ts.err_msg);
    exc = fetch();
  }
  ts.depth--;
  if (ts.depth == 0) {
    Exc ferr = sink_exit();
    if (ferr.set() && (!exc.set() || is_ki(ferr.t))) { drop(exc); exc = ferr; }
    else drop(ferr);
    if (!exc.set() && PyErr_CheckSignals() < 0) { Py_CLEAR(r); exc = fetch(); }
  }
  if (exc.set()) {
    Py_XDECREF(r);
    PyErr_Restore(exc.t, exc.v, exc.tb);
    return NULL;
  }
  if (!r) Py_RETURN_NONE;
  return r;
}

// backend_load_fail(on_locked): XNNPACK compileModel fails; it logs at Error
// level while still holding its lock L; on_locked() runs under L first.
PyObject *m_backend_load_fail(PyObject *, PyObject *args) {
  PyObject *on_locked;
  if (!PyArg_ParseTuple(args, "O", &on_locked)) return NULL;
  std::lock_guard<std::mutex> g(g_backend_L);
  PyObject *r = PyObject_CallNoArgs(on_locked);
  if (!r) return NULL;
  Py_DECREF(r);
  et_log('E', "XNNCompiler.cpp", 18, "compileModel failed: 0x12");
  ts.has_err = true;
  ts.err_type = "RuntimeError";
  ts.err_msg = "loading method forward failed with error 0x12";
  Py_RETURN_NONE;
}

// backend_execute: takes L (GIL held), as execute() does.
PyObject *m_backend_execute(PyObject *, PyObject *) {
  name_thread();
  emit("backend", "\"thread\":" + jstr(ts.name) + ",\"tid\":" + std::to_string(gettid_()) + ",\"step\":\"waits-L\"");
  g_b_tid = gettid_();
  g_b_step = 1;
  std::lock_guard<std::mutex> g(g_backend_L);
  emit("backend", "\"thread\":" + jstr(ts.name) + ",\"step\":\"got-L\"");
  g_b_step = 2;
  Py_RETURN_NONE;
}

PyObject *m_tid(PyObject *, PyObject *) { return PyLong_FromLong(gettid_()); }

PyObject *m_direct_tid(PyObject *, PyObject *) { return PyLong_FromLong(g_direct_tid.load()); }

PyObject *m_flush_outside(PyObject *, PyObject *) {
  if (g_policy == LOGJAM && !flush_outside()) return NULL;
  Py_RETURN_NONE;
}

PyObject *m_abort(PyObject *, PyObject *) {  // the delegate aborts (no fatal line)
  emit("abort", "\"why\":\"delegate abort\"");
  abort();
}

// count real SIGINT arrivals: wrap Python's C handler (PyErr_SetInterrupt
// does not go through it). Call after the last signal.signal().
void counting_handler(int sig, siginfo_t *info, void *uc) {
  g_sigint_arrivals++;
  if (g_py_sigint.sa_flags & SA_SIGINFO) g_py_sigint.sa_sigaction(sig, info, uc);
  else if (g_py_sigint.sa_handler != SIG_DFL && g_py_sigint.sa_handler != SIG_IGN) g_py_sigint.sa_handler(sig);
}

PyObject *m_hook_sigint(PyObject *, PyObject *) {
  struct sigaction cur;
  sigaction(SIGINT, nullptr, &cur);
  if (cur.sa_handler == SIG_IGN || cur.sa_handler == SIG_DFL) Py_RETURN_FALSE;
  g_py_sigint = cur;
  struct sigaction mine = cur;
  mine.sa_flags = (cur.sa_flags | SA_SIGINFO) & ~SA_RESTART;  // as Python: no SA_RESTART
  mine.sa_sigaction = counting_handler;
  sigaction(SIGINT, &mine, nullptr);
  Py_RETURN_TRUE;
}

PyObject *m_sigint_arrivals(PyObject *, PyObject *) { return PyLong_FromLong(g_sigint_arrivals.load()); }

// ---------------------------------------------------------------- watchers
// Native threads (no GIL) standing where the parent would watch the child.

std::string read_file(const std::string &path) {
  FILE *f = fopen(path.c_str(), "r");
  if (!f) return "";
  char buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return std::string(buf, n);
}

// blocked_in_write: the thread is asleep in write(2) on a pipe.
bool blocked_in_write(long tid) {
  std::string base = "/proc/self/task/" + std::to_string(tid) + "/";
  std::string sc = read_file(base + "syscall");
  if (sc.rfind("1 ", 0) != 0) return false;
  return read_file(base + "wchan").find("pipe_write") != std::string::npos;
}

bool in_futex(long tid) {
  std::string sc = read_file("/proc/self/task/" + std::to_string(tid) + "/syscall");
  return sc.rfind("202 ", 0) == 0;
}

void nap() { struct timespec t = {0, 500000}; nanosleep(&t, nullptr); }  // a poll interval, not a sync

// watch_d1(a_tid, resume_mark): D1's fd-2 pipe starts full; once A blocks in
// write(2): if A writes with the GIL kept (a direct write), B cannot move:
// resume now; else (A's sys.stderr.write released the GIL) resume once B has
// either blocked on L (futex after "waits-L") or got L.

PyObject *m_watch_d1(PyObject *, PyObject *args) {
  long a, b;
  const char *mark;
  if (!PyArg_ParseTuple(args, "lls", &a, &b, &mark)) return NULL;
  std::string m = mark;
  std::thread([a, b, m] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (;;) {
      if (blocked_in_write(a)) {
        if (g_direct_tid.load() == a) {
          emit("observed", "\"thread\":\"A\",\"waits\":\"write(2) with the GIL kept\"");
          break;
        }
        // B past "waits-L": read B's state from the backend's own marks
        if (g_backend_L.try_lock()) {
          g_backend_L.unlock();  // L free: A is not holding it; nothing can cycle
          emit("observed", "\"thread\":\"A\",\"waits\":\"write(2), L free\"");
          break;
        }
        if (g_b_step.load() >= 1 && in_futex(b)) {
          emit("observed", "\"thread\":\"B\",\"waits\":\"L (futex) while A holds L and waits in write(2)\"");
          // A holds L and is inside sys.stderr.write, which must retake the
          // GIL; B holds the GIL (it is inside a binding call) and sleeps on
          // L: a cycle, certain from here on.
          emit("cycle", "\"text\":\"A holds the backend lock L and, in sys.stderr.write, waits for the GIL; B holds the GIL and waits for L\","
                        "\"edges\":[{\"thread\":\"A\",\"holds\":\"L\",\"waits\":\"GIL\"},{\"thread\":\"B\",\"holds\":\"GIL\",\"waits\":\"L\"}]");
          break;
        }
      }
      nap();
    }
    tel_raw(m + "\n");
  }).detach();
  Py_RETURN_NONE;
}

// execute_logging(level, n, msglen, sigint_after): a native call body that
// logs n lines; after sigint_after lines it asks the parent for one SIGINT
// ("mark" sigint) and waits, holding the GIL, until it has arrived.
PyObject *m_execute_logging(PyObject *, PyObject *args) {
  const char *lvl;
  int n, len, after;
  if (!PyArg_ParseTuple(args, "siii", &lvl, &n, &len, &after)) return NULL;
  for (int i = 0; i < n; i++) {
    if (i == after) {
      int before = g_sigint_arrivals.load();
      tel_raw("{\"ev\":\"mark\",\"name\":\"sigint\"}\n");
      while (g_sigint_arrivals.load() == before) nap();
    }
    std::string m = "execute step " + std::to_string(i) + " ";
    while ((int)m.size() < len) m += 'x';
    et_log(lvl[0], "xnnpack_backend.cpp", 120, m.substr(0, std::max<size_t>((size_t)len, 0)));
  }
  Py_RETURN_NONE;
}

// watch(tid, syscall_prefix, wchan_part, mark_json): once thread tid sleeps
// in that system call with that wait channel, emit the mark and end.
PyObject *m_watch(PyObject *, PyObject *args) {
  long tid;
  const char *sc, *wc, *mark;
  if (!PyArg_ParseTuple(args, "lsss", &tid, &sc, &wc, &mark)) return NULL;
  std::string s = sc, w = wc, m = mark;
  std::thread([tid, s, w, m] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::string base = "/proc/self/task/" + std::to_string(tid) + "/";
    while (!(read_file(base + "syscall").rfind(s, 0) == 0 && read_file(base + "wchan").find(w) != std::string::npos)) nap();
    emit("observed", "\"tid\":" + std::to_string(tid) + ",\"syscall\":" + jstr(s) + ",\"wchan\":" + jstr(w));
    tel_raw(m + "\n");
  }).detach();
  Py_RETURN_NONE;
}

// b_progress(): B has got L, or is blocked on it (futex after "waits-L").
PyObject *m_b_progress(PyObject *, PyObject *) {
  int st = g_b_step.load();
  if (st == 2 || (st == 1 && in_futex(g_b_tid.load()))) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

// execute_paced(level, n, msglen, pace_ms, pause_ms, sleep_first, then):
// a delegate that logs n lines with pace_ms of work (GIL held) between
// them; pause_ms > 0 first asks the parent to stop reading fd 2 that long
// ("mark" fd2-pause); then: 0 return, 1 the delegate aborts (no fatal
// line), 2 a Fatal line.
PyObject *m_execute_paced(PyObject *, PyObject *args) {
  const char *lvl;
  int n, len, pace, pause, first, then;
  if (!PyArg_ParseTuple(args, "siiiiii", &lvl, &n, &len, &pace, &pause, &first, &then)) return NULL;
  if (pause > 0) tel_raw("{\"ev\":\"mark\",\"name\":\"fd2-pause\",\"ms\":" + std::to_string(pause) + "}\n");
  struct timespec w = {pace / 1000, (long)(pace % 1000) * 1000000L};
  for (int i = 0; i < n; i++) {
    if (first) nanosleep(&w, nullptr);
    std::string m = "delegate work " + std::to_string(i) + " ";
    while ((int)m.size() < len) m += 'y';
    et_log(lvl[0], "vendor_backend.cpp", 322, m);
    if (!first) nanosleep(&w, nullptr);
  }
  if (then == 1) {
    emit("abort", "\"why\":\"delegate aborted\"");
    abort();
  }
  if (then == 2) et_log('F', "vendor_backend.cpp", 340, "delegate state corrupt after " + std::to_string(n) + " lines");
  Py_RETURN_NONE;
}

// block_forever(): the call waits, holding the GIL, for the backend lock
// that a native device worker holds while it waits for a fence nobody
// signals (F2): a real block, no cycle.
PyObject *m_block_forever(PyObject *, PyObject *) {
  static std::mutex fence_mu;
  static std::condition_variable fence;
  std::atomic<bool> holds{false};
  std::thread([&holds] {
    std::unique_lock<std::mutex> L(g_backend_L);
    holds = true;
    std::unique_lock<std::mutex> f(fence_mu);
    fence.wait(f, [] { return false; });
  }).detach();
  while (!holds.load()) nap();
  emit("blocked", "\"thread\":" + jstr(ts.name) + ",\"waits\":\"the backend lock (held by the device worker, which waits for a fence)\"");
  std::lock_guard<std::mutex> g(g_backend_L);
  Py_RETURN_NONE;
}

// ---------------------------------------------------------------- benchmark

// bench(n, size, raw): n lines, each in its own binding call (raw: fwrite).
// Returns (wall ns, writer-thread CPU ns) per line.
PyObject *m_bench(PyObject *, PyObject *args) {
  long n;
  int size, raw;
  if (!PyArg_ParseTuple(args, "lip", &n, &size, &raw)) return NULL;
  name_thread();
  int saved_tel = g_tel;
  g_tel = -1;
  std::string msg(size, 'x');
  struct timespec c0, c1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; i++) {
    if (raw) {
      std::string b = "I " + stamp() + " executorch:bench.cpp:1] " + msg + "\n";
      fwrite(b.data(), 1, b.size(), stderr);
      continue;
    }
    ts.depth++;
    if (ts.depth == 1) { ts.errs.clear(); sink_enter(); }
    et_log('I', "bench.cpp", 1, msg);
    ts.depth--;
    if (ts.depth == 0) {
      Exc e = sink_exit();
      if (e.set()) { g_tel = saved_tel; PyErr_Restore(e.t, e.v, e.tb); return NULL; }
    }
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
  g_tel = saved_tel;
  return Py_BuildValue("(dd)", ns / (double)n, cpu / (double)n);  // wall, writer CPU
}

// drain(fd): a native reader (no GIL) that reads fd to EOF as fast as it
// can, then closes it: "a drained pipe" for the benchmark.
PyObject *m_drain(PyObject *, PyObject *args) {
  int fd;
  if (!PyArg_ParseTuple(args, "i", &fd)) return NULL;
  std::thread([fd] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::vector<char> buf(1 << 16);
    for (;;) {
      ssize_t n = read(fd, buf.data(), buf.size());
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    close(fd);
  }).detach();
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"drain", m_drain, METH_VARARGS, ""},
    {"b_progress", m_b_progress, METH_NOARGS, ""},
    {"block_forever", m_block_forever, METH_NOARGS, ""},
    {"execute_paced", m_execute_paced, METH_VARARGS, ""},
    {"setup", m_setup, METH_VARARGS, "setup(policy, telemetry_fd)"},
    {"emit", m_emit, METH_VARARGS, "emit(json_text)"},
    {"log", m_log, METH_VARARGS, "log(level, file, line, msg_bytes)"},
    {"fail", m_fail, METH_VARARGS, "fail(type, msg_bytes): THROW_IF_ERROR"},
    {"call", m_call, METH_VARARGS, "call(fn, *args): a binding call"},
    {"backend_load_fail", m_backend_load_fail, METH_VARARGS, ""},
    {"backend_execute", m_backend_execute, METH_NOARGS, ""},
    {"tid", m_tid, METH_NOARGS, ""},
    {"direct_tid", m_direct_tid, METH_NOARGS, ""},
    {"flush_outside", m_flush_outside, METH_NOARGS, ""},
    {"abort", m_abort, METH_NOARGS, ""},
    {"hook_sigint", m_hook_sigint, METH_NOARGS, ""},
    {"sigint_arrivals", m_sigint_arrivals, METH_NOARGS, ""},
    {"watch", m_watch, METH_VARARGS, ""},
    {"execute_logging", m_execute_logging, METH_VARARGS, ""},
    {"watch_d1", m_watch_d1, METH_VARARGS, ""},
    {"bench", m_bench, METH_VARARGS, ""},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "logjamext", "log-sink policies at the C-API level", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_logjamext(void) { return PyModule_Create(&moddef); }
