// logjamext: a small CPython extension that does, at the C-API level, what
// each log-sink policy of docs/SCENARIOS.md does, so real interpreters can play
// the matrix's rows. Built by calibrate/build.go (g++ -shared, no setuptools).
//
// Every sink is a logjam::Sink (calibrate/include/logjam/logjam.hpp): the
// five historical ones are below; logjam is the header's own, included as
// a binding includes it; a user's sink (`logjam calibrate -sink FILE.cpp`)
// is linked in and made by its logjam_make_sink().
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
#if defined(LOGJAM_PYBIND11)
// pystderr through pybind11's own pythonbuf (Debian's pybind11-dev), when
// the build found it and it compiles against this interpreter.
#include <pybind11/pybind11.h>
#include <pybind11/iostream.h>
#endif
#include "logjam/logjam.hpp"

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
#include <memory>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

// A user's sink, when one is built in (its FILE.cpp defines it).
logjam::Sink *logjam_make_sink() __attribute__((weak));

namespace {

int g_tel = -1;
std::mutex g_tel_mu;
std::atomic<int> g_seq{0};
std::mutex g_clock_mu;
long long g_last_us = -1;
std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();
std::atomic<int> g_sigint_arrivals{0};
struct sigaction g_py_sigint;
thread_local int t_seq = 0;  // the sequence number of the line this thread is emitting

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

// jtext quotes UTF-8 text as a JSON string, its characters as they are.
std::string jtext(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
    else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
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

// The binding's per-thread state beside logjam::this_thread() (depth, name,
// daemon): the call's Error lines for the exception text, a pending native
// error, and the historical sinks' per-call state.
struct ThreadState {
  bool direct = false, stalled = false;
  logjam::KeepBuffer kept;
  std::string errs;            // the call's Error lines, up to 1024 bytes
  bool has_err = false;        // a native error (THROW_IF_ERROR) is pending
  std::string err_type, err_msg;
  bool named = false;
  std::string name = "?";
  bool daemon = false;
};
thread_local ThreadState ts;

// name_thread: the thread's Python name and daemon flag (GIL held); the
// name also becomes the OS thread's name (comm), so a wait state read from
// outside (/proc/PID/task/TID/comm) says which thread it is.
void name_thread() {
  if (ts.named) return;
  logjam::ThreadInfo &ti = logjam::identify();
  if (!ti.known) return;
  ts.named = true;
  ts.name = ti.name;
  ts.daemon = ti.daemon;
  pthread_setname_np(pthread_self(), ts.name.substr(0, 15).c_str());
}

bool in_call() { return logjam::in_call(); }
bool stderr_replaced() { return logjam::stderr_replaced(); }

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


// ---------------------------------------------------------------- fd 2 (the historical sinks)

std::atomic<long> g_direct_tid{0};  // the thread in a write to fd 2 that may block with the GIL kept

// direct_write: C stdio's fwrite on unbuffered stderr: stdio lock held, GIL
// kept if held, blocks while fd 2 has no room, gives up on EINTR.
void direct_write(const std::string &b) {
  g_direct_tid.store(gettid_());
  fwrite(b.data(), 1, b.size(), stderr);
  g_direct_tid.store(0);
}

// room_check: the room check of the adaptive and merged sinks (poll
// POLLOUT on a pipe up to wait_ms).
bool room_check(int wait_ms) { return logjam::fd2::room(wait_ms); }

// ---------------------------------------------------------------- python write

bool python_write_escaped(const std::string &b) { return logjam::python_write(b); }

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

using logjam::Taken;
using logjam::Exc;

void keep(const std::string &b) { ts.kept.add(b); }
Taken take() { return ts.kept.take(); }

void direct_all(const Taken &t, const char *why) {
  emit("fallback", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(t.lines.size()) + ",\"why\":" + jstr(why));
  for (auto &l : t.all()) direct_write(l);
}

// direct_while_room returns the count and bytes not written.
std::pair<long, long> direct_while_room(const Taken &t, size_t *written_lines) {
  auto all = t.all();
  size_t wrote = 0;
  for (size_t i = 0; i < all.size(); i++) {
    if (!room_check(logjam::kRoomWaitMs)) {
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

// flush_escaped: the flush of the buffered, adaptive and merged sinks, as
// their ~RuntimeErrorScope does it: try { sys.stderr.write(kept) } catch
// (...) { the kept lines to fd 2 }. The catch (...) is the frame a daemon
// thread's forced unwind at exit meets: glibc aborts when it is not
// rethrown (sim/policy: catchAllFlushFrames).
bool flush_escaped(const Taken &t) {
  emit("flush", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(t.lines.size()));
  try {
    return python_write_escaped(t.bytes());
  } catch (...) {
    direct_all(t, "flush threw");
    return true;
  }
}

bool is_ki(PyObject *et) { return et && PyErr_GivenExceptionMatches(et, PyExc_KeyboardInterrupt); }

// ---------------------------------------------------------------- the historical sinks
// Each is a logjam::Sink, as a user's sink is; logjam itself is the header's.

enum Policy { PYSTDERR, FD2, BUFFERED, ADAPTIVE, MERGED, LOGJAM, USER };
Policy g_policy = FD2;

void emit_dropped(long n, long b) {
  emit("dropped", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(n) + ",\"bytes\":" + std::to_string(b));
}

// the exception text of pybind11: PyErr_SetString, strict and
// version-dependent (3.10 drops an undecodable message).
struct SetStringRaise : logjam::Sink {
  void raise(PyObject *type, const std::string &text) override { PyErr_SetString(type, text.c_str()); }
};

struct PyStderrSink : SetStringRaise {
  const char *name() const override { return "pystderr"; }
  void enter() override {}
#if defined(LOGJAM_PYBIND11)
  // The original log callback: a redirect of std::cerr to the current
  // sys.stderr around each line (pybind11's scoped_ostream_redirect over its
  // pythonbuf); unitbuf: the sentry's destructor syncs (noexcept), so a
  // pythonbuf that throws terminates.
  void emit(char, const std::string &b) override {
    PyGILState_STATE g = PyGILState_Ensure();
    {
      pybind11::scoped_ostream_redirect r(std::cerr, pybind11::module_::import("sys").attr("stderr"));
      std::cerr << b;
    }
    PyGILState_Release(g);
  }
#else
  void emit(char, const std::string &b) override { std::cerr << b; }  // unitbuf: the sentry's destructor syncs (noexcept)
#endif
  bool exit() override { return true; }
};

struct Fd2Sink : SetStringRaise {
  const char *name() const override { return "fd2"; }
  void enter() override {}
  void emit(char, const std::string &b) override { direct_write(b); }
  bool exit() override { return true; }
};

struct BufferedSink : SetStringRaise {
  const char *name() const override { return "buffered"; }
  void enter() override { ts.kept.take(); }
  void emit(char level, const std::string &b) override {
    if (level == 'F' || !in_call()) direct_write(b);
    else keep(b);
  }
  bool exit() override {
    Exc saved;
    if (PyErr_CheckSignals() < 0) saved = Exc::fetch();
    Taken t = take();
    if (t.empty()) return finish(saved);
    if (!flush_escaped(t)) {
      Exc err = Exc::fetch();
      ::emit("flush-raised", "\"thread\":" + jstr(ts.name));
      if (is_ki(err.t) && !saved.set()) return finish(err);  // counted as written
      err.drop();
      direct_all(t, "flush raised");
    }
    return finish(saved);
  }
  static bool finish(Exc &e) {
    if (!e.set()) return true;
    e.restore();
    return false;
  }
};

// AdaptiveSink: the third round and, merged, the PR as merged.
struct AdaptiveSink : logjam::Sink {
  bool merged;
  explicit AdaptiveSink(bool m) : merged(m) {}
  const char *name() const override { return merged ? "merged" : "adaptive"; }
  bool daemon_rule() const {
    if (!ts.daemon) return false;
    if (!merged) return true;
    return PY_VERSION_HEX < 0x030D08F0;  // Linux, Python < 3.13.8
  }
  void enter() override {
    ts.kept.take();
    ts.stalled = false;
    ts.direct = !stderr_replaced() || daemon_rule();
  }
  void emit(char level, const std::string &b) override {
    if (level == 'F') {
      if (merged && in_call()) {
        Taken t = take();
        size_t wrote = 0;
        auto left = direct_while_room(t, &wrote);
        fatal_flush_event(t, wrote, left.first);
      }
      direct_write(b);
      return;
    }
    if (!in_call()) { direct_write(b); return; }
    if (ts.direct) {
      if (room_check(logjam::kRoomWaitMs)) { direct_write(b); return; }
      ts.direct = false;
      ts.stalled = true;
    }
    keep(b);
  }
  bool exit() override {
    Taken t = take();
    if (t.empty()) return true;
    if (daemon_rule()) {
      auto left = direct_while_room(t, nullptr);
      if (left.first > 0) emit_dropped(left.first, left.second);
      return true;
    }
    if (!flush_escaped(t)) {
      Exc err = Exc::fetch();
      direct_all(t, "flush raised");
      bool ki = is_ki(err.t);
      err.drop();
      if (ki) { ::emit("set-interrupt", ""); PyErr_SetInterrupt(); }  // replayed after the call
    }
    return true;
  }
  void raise(PyObject *type, const std::string &full) override {
    if (merged) { logjam::raise_escaped(type, full); return; }
    // the appended errors escaped, then the whole text decoded strictly (a
    // main text cut inside a character meets the separator: "invalid
    // continuation byte"), as sim/policy's adaptive does
    std::string whole = full.substr(0, full.size() - (ts.errs.empty() ? 0 : ts.errs.size() + 1));
    if (!ts.errs.empty()) {
      PyObject *a = logjam::decode_escaped(ts.errs);
      if (!a) return;
      const char *u = PyUnicode_AsUTF8(a);
      whole += "\n" + std::string(u ? u : "");
      Py_DECREF(a);
    }
    PyObject *text = PyUnicode_DecodeUTF8(whole.data(), (Py_ssize_t)whole.size(), "strict");
    if (!text) return;
    PyErr_SetObject(type, text);
    Py_DECREF(text);
  }
  static void fatal_flush_event(const Taken &t, size_t wrote, long left) {
    std::string w = "[";
    for (size_t i = 0; i < wrote && i < t.lines.size(); i++) w += (i ? ",\"" : "\"") + base64(t.lines[i]) + "\"";
    w += "]";
    ::emit("fatal-flush", "\"thread\":" + jstr(ts.name) + ",\"fatal\":" + std::to_string(t_seq) + ",\"written\":" + w + ",\"left\":" + std::to_string(left));
  }
};

// Telemetry: what the header's sink (or a user's) reports, as events.
struct TelemetryObserver : logjam::Observer {
  void flush(size_t lines, const std::string &, const char *to) override {
    ::emit("flush", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(lines) + ",\"to\":" + jstr(to));
  }
  void fallback(size_t lines, const char *why) override {
    ::emit("fallback", "\"thread\":" + jstr(ts.name) + ",\"lines\":" + std::to_string(lines) + ",\"why\":" + jstr(why));
  }
  void fatal_flush(const std::vector<std::string> &written, size_t left) override {
    std::string w = "[";
    for (size_t i = 0; i < written.size(); i++) w += (i ? ",\"" : "\"") + base64(written[i]) + "\"";
    w += "]";
    ::emit("fatal-flush", "\"thread\":" + jstr(ts.name) + ",\"fatal\":" + std::to_string(t_seq) + ",\"written\":" + w + ",\"left\":" + std::to_string(left));
  }
  void fd2_write(bool begin) override { g_direct_tid.store(begin ? gettid_() : 0); }
};

// raise_native: THROW_IF_ERROR's exception: the message cut at 127 bytes
// (and at a NUL), the call's Error lines appended, raised by the sink.
void raise_native(const std::string &type, const std::string &formatted) {
  std::string main = cstr(formatted.substr(0, std::min<size_t>(formatted.size(), 127)));
  std::string full = main;
  if (!ts.errs.empty()) full += "\n" + ts.errs;
  PyObject *exc = type == "IndexError" ? PyExc_IndexError : PyExc_RuntimeError;
  logjam::raise(exc, full);
}

// ---------------------------------------------------------------- ET_LOG

void et_log(char level, const std::string &file, int lineno, const std::string &msg_in) {  // GIL held
  name_thread();
  std::string msg = msg_in.substr(0, std::min<size_t>(msg_in.size(), 255));
  msg = cstr(msg.substr(0, valid_prefix_len(msg)));
  int seq = ++g_seq;
  t_seq = seq;
  std::string b = std::string(1, level) + " " + stamp() + " executorch:" + file + ":" + std::to_string(lineno) + "] " + msg + "\n";
  if (level == 'E' && in_call() && ts.errs.size() < 1024) {
    std::string add = msg + "\n";
    ts.errs += add.substr(0, std::min<size_t>(add.size(), 1024 - ts.errs.size()));
  }
  if (g_tel >= 0)
    emit("line", "\"seq\":" + std::to_string(seq) + ",\"thread\":" + jstr(ts.name) + ",\"daemon\":" + (ts.daemon ? "true" : "false") +
                   ",\"level\":\"" + std::string(1, level) + "\",\"in_call\":" + (in_call() ? "true" : "false") +
                   ",\"replaced\":" + (stderr_replaced() ? "true" : "false") + ",\"b\":\"" + base64(b) + "\"");
  logjam::log(level, b);
  if (level == 'F') {
    emit("abort", "\"why\":\"fatal log line\"");
    abort();
  }
}

std::mutex g_backend_L;
std::mutex g_a_mu;
std::condition_variable g_a_cv;
bool g_a_locked = false;  // A holds L (backend_load_fail)
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
  else if (p == "user") g_policy = USER;
  else { PyErr_Format(PyExc_ValueError, "unknown policy %s", pol); return NULL; }
  g_tel = fd;
  logjam::Sink *s = nullptr;
  switch (g_policy) {
    case PYSTDERR:
      std::cerr.setf(std::ios::unitbuf);
#if !defined(LOGJAM_PYBIND11)
      if (!g_pybuf) {
        g_pybuf = new pythonbuf();
        std::cerr.rdbuf(g_pybuf);
      }
#endif
      s = new PyStderrSink();
      break;
    case FD2: s = new Fd2Sink(); break;
    case BUFFERED: s = new BufferedSink(); break;
    case ADAPTIVE: s = new AdaptiveSink(false); break;
    case MERGED: s = new AdaptiveSink(true); break;
    case LOGJAM: s = new logjam::Logjam(); break;
    case USER:
      if (!logjam_make_sink || !(s = logjam_make_sink())) {
        PyErr_SetString(PyExc_ValueError, "no user sink built in (logjam_make_sink)");
        return NULL;
      }
      break;
  }
  static TelemetryObserver tel_observer;
  logjam::set_observer(&tel_observer);
  logjam::install(s);
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
  if (!in_call()) ts.errs.clear();
  logjam::enter();
  ts.has_err = false;
  PyObject *r = PyObject_Call(fn, rest, NULL);
  Py_DECREF(rest);
  Exc exc;
  if (!r) exc = Exc::fetch();
  else if (ts.has_err) {
    ts.has_err = false;
    Py_CLEAR(r);
    raise_native(ts.err_type, ts.err_msg);
    exc = Exc::fetch();
  }
  bool outermost = logjam::this_thread().depth == 1;
  Exc ferr;
  if (!logjam::leave()) ferr = Exc::fetch();
  if (ferr.set() && (!exc.set() || is_ki(ferr.t))) { exc.drop(); exc = ferr; }
  else ferr.drop();
  if (outermost && !exc.set() && PyErr_CheckSignals() < 0) { Py_CLEAR(r); exc = Exc::fetch(); }
  if (exc.set()) {
    Py_XDECREF(r);
    exc.restore();
    return NULL;
  }
  if (!r) Py_RETURN_NONE;
  return r;
}

// emit_exception reports a fetched exception (t, v, tb: PyErr_Fetch's,
// kept, maybe normalized) as an "exception" event of call on this thread.
void emit_exception(const std::string &call, PyObject *&t, PyObject *&v, PyObject *&tb) {
  std::string type = t && PyType_Check(t) ? ((PyTypeObject *)t)->tp_name : "?";
  std::string text;
  if (t && PyErr_GivenExceptionMatches(t, PyExc_KeyboardInterrupt)) {
    // Its text without normalizing it or calling str(): either can reach
    // the eval loop's pending-signal check, run a second SIGINT's handler
    // here, and its KeyboardInterrupt would be lost.
    PyObject *a = v && PyExceptionInstance_Check(v) ? ((PyBaseExceptionObject *)v)->args : nullptr;
    PyObject *s0 = a && PyTuple_Check(a) && PyTuple_GET_SIZE(a) == 1 ? PyTuple_GET_ITEM(a, 0) : (v && PyUnicode_Check(v) ? v : nullptr);
    Py_ssize_t len = 0;
    const char *u = s0 && PyUnicode_Check(s0) ? PyUnicode_AsUTF8AndSize(s0, &len) : nullptr;
    if (u) text.assign(u, (size_t)len);
  } else {
    PyErr_NormalizeException(&t, &v, &tb);
    if (PyObject *str = v ? PyObject_Str(v) : nullptr) {
      if (PyObject *b = PyUnicode_AsEncodedString(str, "utf-8", "backslashreplace")) {
        text.assign(PyBytes_AsString(b), (size_t)PyBytes_Size(b));
        Py_DECREF(b);
      }
      Py_DECREF(str);
    }
  }
  PyErr_Clear();
  emit("exception", "\"thread\":" + jstr(ts.name) + ",\"call\":" + jstr(call) + ",\"type\":" + jstr(type) + ",\"text\":" + jtext(text));
}

// call_named(name, fn, *args): call(fn, *args), and the exception it
// raises to the caller reported natively ("exception"), before the eval
// loop can run a pending SIGINT handler in the caller's except clause.
PyObject *m_call_named(PyObject *self, PyObject *args) {
  Py_ssize_t n = PyTuple_Size(args);
  if (n < 2) { PyErr_SetString(PyExc_TypeError, "call_named(name, fn, *args)"); return NULL; }
  PyObject *nm = PyTuple_GetItem(args, 0);
  const char *cname = PyUnicode_Check(nm) ? PyUnicode_AsUTF8(nm) : nullptr;
  std::string name = cname ? cname : "?";
  PyObject *rest = PyTuple_GetSlice(args, 1, n);
  PyObject *r = m_call(self, rest);
  Py_DECREF(rest);
  if (r) return r;
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  emit_exception(name, t, v, tb);
  PyErr_Restore(t, v, tb);
  return NULL;
}

// backend_load_fail(on_locked): XNNPACK compileModel fails; it logs at Error
// level while still holding its lock L; on_locked() runs under L first.
PyObject *m_backend_load_fail(PyObject *, PyObject *args) {
  PyObject *on_locked;
  if (!PyArg_ParseTuple(args, "O", &on_locked)) return NULL;
  std::lock_guard<std::mutex> g(g_backend_L);
  {
    // B may start once L is held; A keeps the GIL until its first release
    // (a Python write, or the call's end): no switch interval can let B in
    // earlier, as a Python callback here would.
    std::lock_guard<std::mutex> a(g_a_mu);
    g_a_locked = true;
    g_a_cv.notify_all();
  }
  if (on_locked != Py_None) {
    PyObject *r = PyObject_CallNoArgs(on_locked);
    if (!r) return NULL;
    Py_DECREF(r);
  }
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

// wait_a_locked(): B's barrier: waits, GIL released, until A holds L.
PyObject *m_wait_a_locked(PyObject *, PyObject *) {
  Py_BEGIN_ALLOW_THREADS
  std::unique_lock<std::mutex> a(g_a_mu);
  g_a_cv.wait(a, [] { return g_a_locked; });
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

PyObject *m_tid(PyObject *, PyObject *) { return PyLong_FromLong(gettid_()); }

PyObject *m_direct_tid(PyObject *, PyObject *) { return PyLong_FromLong(g_direct_tid.load()); }

PyObject *m_flush_outside(PyObject *, PyObject *) {
  if (!logjam::flush_outside()) return NULL;
  Py_RETURN_NONE;
}

PyObject *m_abort(PyObject *, PyObject *) {  // the delegate aborts (no fatal line)
  emit("abort", "\"why\":\"delegate abort\"");
  abort();
}

// count real SIGINT arrivals: wrap Python's C handler (PyErr_SetInterrupt
// does not go through it). Call after the last signal.signal().
std::atomic<long> g_sigint_tid{0};  // the thread the kernel ran the last SIGINT's handler on
void counting_handler(int sig, siginfo_t *info, void *uc) {
  g_sigint_arrivals++;
  g_sigint_tid.store(gettid_());
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
PyObject *m_sigint_tid(PyObject *, PyObject *) { return PyLong_FromLong(g_sigint_tid.load()); }

// ---------------------------------------------------------------- watchers
// Native threads (no GIL) standing where the parent would watch the child.

std::string read_file(const std::string &path) {
  FILE *f = fopen(path.c_str(), "r");
  if (!f) return "";
  char buf[4096];
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
          // The cue only: whether the threads then wait for each other for
          // good is read from outside at the row's deadline (their wait
          // state in /proc), never declared here.
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

// execute_pool(workers, n, msglen): a native call body that runs its work
// on the runtime's own thread pool: workers native threads (no Python
// thread state) that log n lines each, started in order, and joined with
// the GIL held (std::thread::join releases nothing), as the model's D3 and
// D4 do. A worker names itself (W0, W1, ...): it cannot ask Python.
PyObject *m_execute_pool(PyObject *, PyObject *args) {
  int workers, n, len;
  if (!PyArg_ParseTuple(args, "iii", &workers, &n, &len)) return NULL;
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; w++) {
    pool.emplace_back([w, n, len] {
      ts.named = true;
      ts.name = "W" + std::to_string(w);
      pthread_setname_np(pthread_self(), ts.name.c_str());
      for (int i = 0; i < n; i++) {
        std::string m = "partition " + std::to_string(w) + " step " + std::to_string(i) + ": ";
        while ((int)m.size() < len) m += 'x';
        et_log('I', "xnnpack_threadpool.cpp", 88, m.substr(0, (size_t)len));
      }
    });
  }
  for (auto &t : pool) t.join();
  Py_RETURN_NONE;
}

// The sink's own lock, held from another thread as the header's tests
// hold it (calibrate/headertest: LogjamTestAccess).
}  // namespace
namespace logjam {
struct LogjamTestAccess {
  using Held = Logjam::Held;
};
}  // namespace logjam
namespace {

std::mutex g_fork_mu;
std::condition_variable g_fork_cv;
bool g_sink_held = false;
std::atomic<bool> g_fork_begun{false}, g_fork_done{false};
std::atomic<long> g_forker_tid{0};
std::thread g_sink_holder;

// At-fork handlers of the extension's own, registered after the sink's
// (install, in setup): the prepare handler runs before the sink's, the
// parent's after it.
void on_fork_begun() { g_fork_begun.store(true); }
void on_fork_done() { g_fork_done.store(true); }

// hold_sink_lock(): row D5's T1, a native thread of the runtime (no Python
// thread state), holds the sink's own lock (logjam's keep lock, as while it
// keeps a line outside any call; the historical sinks own none: it holds
// nothing) until the fork has begun and the forking thread waits in a
// futex (the sink's prepare handler waiting for that lock), or the fork is
// over in the parent (no prepare handler took it): the model's barrier,
// read from /proc. Returns once T1 holds it. join_sink_holder() joins T1.
PyObject *m_hold_sink_lock(PyObject *, PyObject *) {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(on_fork_begun, on_fork_done, nullptr); });
  auto *lj = dynamic_cast<logjam::Logjam *>(logjam::sink());
  g_forker_tid.store(gettid_());
  g_sink_holder = std::thread([lj] {
    ts.named = true;
    ts.name = "T1";
    pthread_setname_np(pthread_self(), "T1");
    std::unique_ptr<logjam::LogjamTestAccess::Held> held;
    if (lj) held.reset(new logjam::LogjamTestAccess::Held(*lj));
    {
      std::lock_guard<std::mutex> g(g_fork_mu);
      g_sink_held = true;
    }
    g_fork_cv.notify_all();
    while (!g_fork_done.load() && !(g_fork_begun.load() && in_futex(g_forker_tid.load()))) nap();
    held.reset();
  });
  Py_BEGIN_ALLOW_THREADS
  {
    std::unique_lock<std::mutex> g(g_fork_mu);
    g_fork_cv.wait(g, [] { return g_sink_held; });
  }
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

PyObject *m_join_sink_holder(PyObject *, PyObject *) {
  Py_BEGIN_ALLOW_THREADS
  if (g_sink_holder.joinable()) g_sink_holder.join();
  Py_END_ALLOW_THREADS
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

// voluntary_switches: how many times thread tid has gone to sleep (a new
// wait shows as a higher count).
long voluntary_switches(long tid) {
  std::string st = read_file("/proc/self/task/" + std::to_string(tid) + "/status");
  size_t i = st.find("voluntary_ctxt_switches:");
  if (i == std::string::npos || (i > 0 && st[i - 1] != '\n')) {
    i = st.find("\nvoluntary_ctxt_switches:");
    if (i == std::string::npos) return -1;
    i++;
  }
  return atol(st.c_str() + i + strlen("voluntary_ctxt_switches:"));
}

std::atomic<bool> g_call_over{false};

// watch_i7(tid): I7's cues. Twice: once thread tid sleeps in write(2) on
// the stalled pipe in a wait begun after the last cue (a higher voluntary
// switch count), ask for a SIGINT and wait until it has arrived; then ask
// the parent to resume fd 2 at the next such wait, or once the call is over.
PyObject *m_watch_i7(PyObject *, PyObject *args) {
  long tid;
  if (!PyArg_ParseTuple(args, "l", &tid)) return NULL;
  std::thread([tid] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    long seen = -1;
    auto next_wait = [&]() -> bool {  // false: the call is over first
      for (;;) {
        if (blocked_in_write(tid)) {
          long v = voluntary_switches(tid);
          if (v > seen) { seen = v; return true; }
        }
        if (g_call_over.load()) return false;
        nap();
      }
    };
    for (int i = 1; i <= 2; i++) {
      if (!next_wait()) break;
      emit("observed", "\"thread\":\"MainThread\",\"waits\":\"write(2) on the stalled pipe\",\"then\":\"SIGINT " + std::to_string(i) + " of 2\"");
      int before = g_sigint_arrivals.load();
      tel_raw("{\"ev\":\"mark\",\"name\":\"sigint\"}\n");
      while (g_sigint_arrivals.load() == before) nap();
    }
    bool again = next_wait();
    emit("observed", std::string("\"thread\":\"MainThread\",\"waits\":") + (again ? "\"write(2) again, after the SIGINTs\"" : "\"nothing: the call is over\"") + ",\"then\":\"resume fd 2\"");
    tel_raw("{\"ev\":\"mark\",\"name\":\"fd2-resume\"}\n");
  }).detach();
  Py_RETURN_NONE;
}

PyObject *m_call_over(PyObject *, PyObject *) {
  g_call_over.store(true);
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

// ---------------------------------------------------------------- schedules
// A random-found row (RF*) played for real: run_row.py's row_R reads the
// schedule; each Python thread's calls run here natively, back to back, so
// no bytecode (and so no switch interval) lies between them: a thread lets
// the GIL go only where its sink does (a Python write, a released flush).

std::mutex g_sched_backends[2];  // the schedule's two backends, each its own lock L
const char *const g_sched_backend_names[2] = {"xnnpack", "vulkan"};
std::mutex g_gate_mu;
std::condition_variable g_gate_cv;
bool g_main_began = false;       // MainThread's calls have begun
std::atomic<int> g_gated{0};     // threads with calls waiting at the gate (no GIL)
std::atomic<int> g_asking{0};    // threads that now ask for the GIL

// asleep: thread tid sleeps (state S or D), or has ended.
bool asleep(long tid) {
  std::string st = read_file("/proc/self/task/" + std::to_string(tid) + "/stat");
  if (st.empty()) return true;  // ended
  size_t r = st.rfind(')');
  return r != std::string::npos && r + 2 < st.size() && (st[r + 2] == 'S' || st[r + 2] == 'D');
}

// waits_for: what thread tid waits for, read from /proc/self/task/TID
// (syscall, wchan), or "" while it runs or sleeps in a wait that ends by
// itself (a write(2) that contends for the pipe's mutex, the GIL's own
// mutex). take_gil's COND_TIMED_WAIT is the only timed futex wait here
// ("202 uaddr 0x89 val timeout"); a semaphore or condition (a
// BufferedWriter's lock, a join) waits untimed; a backend's std::mutex is
// FUTEX_WAIT on its own address.
std::string waits_for(long tid, std::string *sc_out) {
  std::string base = "/proc/self/task/" + std::to_string(tid) + "/";
  if (!asleep(tid)) return "";
  std::string sc = read_file(base + "syscall");
  *sc_out = sc.substr(0, sc.find('\n'));
  unsigned long nr = ~0UL, a1 = 0, op = 0, val = 0, timeout = 0;
  if (sscanf(sc.c_str(), "%lu %lx %lx %lx %lx", &nr, &a1, &op, &val, &timeout) < 1) return sc.empty() ? "its end" : "";
  if (nr == 202 && (op & 0x7f) == 9) return timeout != 0 ? "the GIL" : "a semaphore or a condition";
  if (nr == 202 && (op & 0x7f) == 0)
    for (auto &m : g_sched_backends)
      if (a1 == (unsigned long)(void *)&m) return "a backend's lock";
  if (nr == 1 && read_file(base + "wchan").find("pipe_write") != std::string::npos) return "room on a pipe (write(2))";
  if (nr == 7 || nr == 271) {  // poll, ppoll: logjam's bounded wait for room on fd 2
    struct pollfd q{};
    struct iovec local = {&q, sizeof q}, remote = {(void *)a1, sizeof q};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof q && q.fd == 2 && (q.events & POLLOUT))
      return "room on fd 2 (poll)";
  }
  return "";
}

// The forwarder's read barrier, as the model's (sim FD2Capture.awaitRead):
// a capture's forwarder reads only when every schedule thread waits for
// something only the process can end (waits_for) or has ended, and the
// pipe holds bytes, or once the capture is closing. A real forwarder that
// read whenever bytes arrived asked for the GIL as a third contender at a
// moment the scheduler chose (RF3 unbuffered: OK or LOST, docs/FINDINGS.md).
std::mutex g_barrier_mu;
std::vector<long> g_barrier_tids;      // the schedule's threads
std::atomic<bool> g_capture_closing{false};

PyObject *m_barrier_thread(PyObject *, PyObject *) {
  std::lock_guard<std::mutex> g(g_barrier_mu);
  g_barrier_tids.push_back((long)syscall(SYS_gettid));
  Py_RETURN_NONE;
}

PyObject *m_capture_closing(PyObject *, PyObject *) {
  g_capture_closing = true;
  Py_RETURN_NONE;
}

// blocked: thread tid waits (waits_for) or sleeps on any lock without a
// timeout (a plain FUTEX_WAIT: stdio's lock on stderr, a lock of the
// header's). The GIL's own mutex is such a lock too, but its holder runs,
// so a barrier over every schedule thread never holds on it alone.
bool blocked(long tid) {
  std::string sc;
  if (!waits_for(tid, &sc).empty()) return true;
  unsigned long nr = ~0UL, a1 = 0, op = 0;
  // sc is read only while tid sleeps (waits_for): empty otherwise.
  return sscanf(sc.c_str(), "%lu %lx %lx", &nr, &a1, &op) == 3 && nr == 202 && (op & 0x7f) == 0;
}

// barrier_threads: the schedule's threads registered so far.
std::vector<long> barrier_threads() {
  std::lock_guard<std::mutex> g(g_barrier_mu);
  return g_barrier_tids;
}

// read_on_barrier(fd, chunk): os.read(fd, chunk) once the barrier holds.
PyObject *m_read_on_barrier(PyObject *, PyObject *args) {
  int fd, chunk;
  if (!PyArg_ParseTuple(args, "ii", &fd, &chunk)) return NULL;
  std::string buf((size_t)chunk, '\0');
  ssize_t n;
  PyThreadState *st = PyEval_SaveThread();
  for (;;) {
    if (g_capture_closing.load()) break;
    bool all = true;
    for (long tid : barrier_threads())
      if (!blocked(tid)) { all = false; break; }
    int queued = 0;
    if (all && ioctl(fd, FIONREAD, &queued) == 0 && queued > 0) break;
    nap();
  }
  do n = read(fd, &buf[0], (size_t)chunk);
  while (n < 0 && errno == EINTR);
  PyEval_RestoreThread(st);
  if (n < 0) return PyErr_SetFromErrno(PyExc_OSError);
  return PyBytes_FromStringAndSize(buf.data(), n);
}

// wait_waits: the model's seeded switch point (WaitUntilIdle): until thread
// tid waits for something (waits_for) or has ended. One that waits for the
// GIL must also have asked for a forced switch (it slept there anew: its
// first timed wait ran out, so it set the drop request): the holder's next
// release then hands the GIL to it, whatever the scheduler does, as the
// model's FIFO handoff. Without it, a holder whose own write(2) returned at
// once could take the GIL back before the waiter woke, and a waiter caught
// asleep on the pipe's mutex inside a write(2) that had room was taken for
// one that waits (RF3 under pystderr: OK or HANG). The state seen is kept
// as evidence.
void wait_waits(long tid) {
  long first = -1;
  std::string what, sc;
  for (;;) {
    what = waits_for(tid, &sc);
    if (what == "the GIL") {
      long v = voluntary_switches(tid);
      if (first < 0) first = v;
      else if (v > first) break;
    } else if (!what.empty()) {
      break;
    } else {
      first = -1;
    }
    nap();
  }
  emit("observed", "\"thread\":" + jstr(ts.name) + ",\"waits\":" + jstr("until thread " + std::to_string(tid) + " waits: it waits for " + what +
       (what == "the GIL" ? " (a forced switch asked)" : "") + "; syscall " + sc) + ",\"then\":\"logs\"");
}

// settle_others: the model's GIL release barrier (sim Thread.ReleaseGIL)
// before a call's leave, where its sink may let the GIL go to write: every
// other schedule thread waits (blocked) or has ended, so a write(2) another
// thread began without the GIL is over before this one's begins (RF3
// buffered, python -u: T2's line landed inside MainThread's 15 KB write).
void settle_others() {
  long self = (long)syscall(SYS_gettid);
  for (long tid : barrier_threads())
    while (tid != self && !blocked(tid)) nap();
}

// message: line n of a call, as sim/programs' message(): ASCII filler
// ("delegate trace N " then letters) or three-byte characters after a
// one-byte prefix, cut at size bytes (et_log trims a cut character).
std::string sched_message(int n, int size, bool cjk) {
  std::string b;
  if (cjk) {
    b = std::to_string(n) + " ";
    for (int i = 0; i < size / 3 + 1; i++) b += "\xe9\x94\x99";  // 错
    return b.substr(0, (size_t)size);
  }
  b = "delegate trace " + std::to_string(n) + " ";
  for (int j = 0; (int)b.size() < size; j++) b += (char)('a' + (n + j) % 26);
  return b;
}

// report_exception: a call's exception, reported as call_named reports it,
// then cleared (the script caught it).
void report_exception(const char *call) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  emit_exception(call, t, v, tb);
  Py_XDECREF(t);
  Py_XDECREF(v);
  Py_XDECREF(tb);
}

// run_calls(is_main, calls, askers): thread's calls, each a binding call
// (enter; its backend's lock L taken with the GIL held; wait_tid: wait,
// holding both, until that thread waits (wait_waits), the model's seeded
// switch point; the lines; L let go; leave). calls: tuples (backend, lines,
// size, level, cjk, wait_tid).
//
// The GIL's order, as the model's FIFO handoff: a thread other than
// MainThread asks for the GIL only once MainThread's calls have begun, and
// MainThread begins only once every asker sleeps in the GIL's wait a second
// time (its first timed wait ran out, so it has asked MainThread to drop
// the GIL: CPython's forced switch then hands the GIL to it at
// MainThread's first release, whatever the scheduler does).
PyObject *m_run_calls(PyObject *, PyObject *args) {
  int is_main;
  PyObject *calls, *askers;
  if (!PyArg_ParseTuple(args, "pOO", &is_main, &calls, &askers)) return NULL;
  name_thread();
  struct Call { int backend, lines, size; char level; bool cjk; long wait_tid; };
  std::vector<Call> cs;
  for (Py_ssize_t i = 0; i < PySequence_Size(calls); i++) {
    PyObject *c = PySequence_GetItem(calls, i);
    Call k{};
    const char *lvl;
    int cjk;
    if (!c || !PyArg_ParseTuple(c, "iiispl", &k.backend, &k.lines, &k.size, &lvl, &cjk, &k.wait_tid)) { Py_XDECREF(c); return NULL; }
    Py_DECREF(c);
    if (k.backend < 0 || k.backend > 1) { PyErr_SetString(PyExc_ValueError, "backend 0 or 1"); return NULL; }
    k.level = lvl[0];
    k.cjk = cjk;
    cs.push_back(k);
  }
  std::vector<long> ask;
  for (Py_ssize_t i = 0; i < PySequence_Size(askers); i++) {
    PyObject *o = PySequence_GetItem(askers, i);
    ask.push_back(o ? PyLong_AsLong(o) : 0);
    Py_XDECREF(o);
  }
  if (PyErr_Occurred()) return NULL;
  if (is_main) {
    {
      // every asker waits at the gate, without the GIL, before it opens
      PyThreadState *st = PyEval_SaveThread();
      while (g_gated.load() < (int)ask.size()) nap();
      PyEval_RestoreThread(st);
      std::lock_guard<std::mutex> g(g_gate_mu);
      g_main_began = true;
    }
    g_gate_cv.notify_all();
    // GIL held: each asker blocks in take_gil; wait for its second sleep there.
    while (g_asking.load() < (int)ask.size()) nap();
    for (long tid : ask) {
      long first = -1;
      for (;;) {
        if (asleep(tid)) {
          long v = voluntary_switches(tid);
          if (first < 0) first = v;
          else if (v > first) break;
        }
        nap();
      }
    }
    emit("observed", "\"thread\":\"MainThread\",\"waits\":\"nothing\",\"then\":\"its calls begin; " + std::to_string(ask.size()) + " thread(s) asked for the GIL\"");
  } else if (!cs.empty()) {
    PyThreadState *st = PyEval_SaveThread();
    g_gated++;
    {
      std::unique_lock<std::mutex> g(g_gate_mu);
      g_gate_cv.wait(g, [] { return g_main_began; });
    }
    g_asking++;
    PyEval_RestoreThread(st);
    emit("observed", "\"thread\":" + jstr(ts.name) + ",\"waits\":\"nothing\",\"then\":\"got the GIL\"");
  }
  for (const Call &k : cs) {
    if (!in_call()) ts.errs.clear();
    logjam::enter();
    {
      std::lock_guard<std::mutex> L(g_sched_backends[k.backend]);
      if (k.wait_tid > 0) {
        wait_waits(k.wait_tid);
      }
      for (int n = 0; n < k.lines; n++)
        et_log(k.level, std::string(g_sched_backend_names[k.backend]) + "_backend.cpp", 211, sched_message(n, k.size, k.cjk));
    }
    settle_others();
    if (!logjam::leave()) report_exception("execute");
  }
  Py_RETURN_NONE;
}

// log_outside(n, size): n lines outside any call, GIL held throughout (a
// destructor's), as the model's outside lines.
PyObject *m_log_outside(PyObject *, PyObject *args) {
  int n, size;
  if (!PyArg_ParseTuple(args, "ii", &n, &size)) return NULL;
  name_thread();
  for (int i = 0; i < n; i++) et_log('I', "module.cpp", 58, sched_message(i, size, false));
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"b_progress", m_b_progress, METH_NOARGS, ""},
    {"block_forever", m_block_forever, METH_NOARGS, ""},
    {"execute_paced", m_execute_paced, METH_VARARGS, ""},
    {"setup", m_setup, METH_VARARGS, "setup(policy, telemetry_fd)"},
    {"emit", m_emit, METH_VARARGS, "emit(json_text)"},
    {"log", m_log, METH_VARARGS, "log(level, file, line, msg_bytes)"},
    {"fail", m_fail, METH_VARARGS, "fail(type, msg_bytes): THROW_IF_ERROR"},
    {"call", m_call, METH_VARARGS, "call(fn, *args): a binding call"},
    {"call_named", m_call_named, METH_VARARGS, "call_named(name, fn, *args): call, its exception reported"},
    {"backend_load_fail", m_backend_load_fail, METH_VARARGS, ""},
    {"backend_execute", m_backend_execute, METH_NOARGS, ""},
    {"tid", m_tid, METH_NOARGS, ""},
    {"wait_a_locked", m_wait_a_locked, METH_NOARGS, ""},
    {"direct_tid", m_direct_tid, METH_NOARGS, ""},
    {"flush_outside", m_flush_outside, METH_NOARGS, ""},
    {"abort", m_abort, METH_NOARGS, ""},
    {"hook_sigint", m_hook_sigint, METH_NOARGS, ""},
    {"sigint_arrivals", m_sigint_arrivals, METH_NOARGS, ""},
    {"sigint_tid", m_sigint_tid, METH_NOARGS, "the thread the last SIGINT's C handler ran on"},
    {"watch", m_watch, METH_VARARGS, ""},
    {"execute_logging", m_execute_logging, METH_VARARGS, ""},
    {"hold_sink_lock", m_hold_sink_lock, METH_NOARGS, "hold_sink_lock(): a native thread T1 holds the sink's own lock until a fork begins"},
    {"join_sink_holder", m_join_sink_holder, METH_NOARGS, ""},
    {"execute_pool", m_execute_pool, METH_VARARGS, "execute_pool(workers, n, msglen): its pool's native threads log; joined with the GIL held"},
    {"watch_d1", m_watch_d1, METH_VARARGS, ""},
    {"watch_i7", m_watch_i7, METH_VARARGS, ""},
    {"call_over", m_call_over, METH_NOARGS, ""},
    {"run_calls", m_run_calls, METH_VARARGS, "run_calls(is_main, calls, askers)"},
    {"barrier_thread", m_barrier_thread, METH_NOARGS, "the calling thread is one the forwarder's read barrier waits for"},
    {"capture_closing", m_capture_closing, METH_NOARGS, "the forwarder reads freely from now on"},
    {"read_on_barrier", m_read_on_barrier, METH_VARARGS, "read_on_barrier(fd, chunk): os.read once every barrier thread waits"},
    {"log_outside", m_log_outside, METH_VARARGS, "log_outside(n, size)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "logjamext", "log-sink policies at the C-API level", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_logjamext(void) {
  PyObject *m = PyModule_Create(&moddef);
#if defined(LOGJAM_PYBIND11)
  if (m) PyModule_AddStringConstant(m, "pythonbuf", "pybind11 " PYBIND11_TOSTRING(PYBIND11_VERSION_MAJOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_MINOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_PATCH));
#else
  if (m) PyModule_AddStringConstant(m, "pythonbuf", "a copy of pybind11 2.10's");
#endif
  return m;
}
