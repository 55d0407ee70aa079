// The five historical sinks (pystderr, fd2, buffered, adaptive, merged); the header's sink reported as telemetry.
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"

namespace {

// Their writes to fd 2 and their keep buffer.

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

bool python_write_escaped(const std::string &b) { return logjam::python_write(b); }

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
  void kept_outside() override { crash_point(); }  // row F10: the crash may arrive here, the sink's lock held
};

}  // namespace
