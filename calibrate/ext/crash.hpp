// Row F10's crash handler: a runtime's failure signal handler (glog's,
// absl's) that logs its Fatal line through the sink from the signal
// handler, raised while the sink handles a chosen line.
#pragma once

#include "etlog.hpp"
#include "sinks.hpp"

namespace {

// arm_crash(n): the n-th line this thread logs from now on is interrupted
// by SIGTERM (a supervisor's), at the model's two points: where the sink
// keeps the line, its own lock held (the observer's kept_outside: the
// header's sink), or once the sink is done with it (et_log, after the
// sink returned: a sink that keeps nothing there).
std::atomic<long> g_crash_tid{0};
int g_crash_line = 0, g_crash_seen = 0;
std::atomic<bool> g_crash_fired{false};

// crash_armed_here: a crash is armed, on this thread (the tid asked only
// once armed: a system call per line otherwise).
bool crash_armed_here() { return g_crash_tid.load() != 0 && !g_crash_fired.load() && g_crash_tid.load() == gettid_(); }

// crash_logged counts a line of the armed thread (et_log, before the sink).
void crash_logged() {
  if (crash_armed_here()) g_crash_seen++;
}

// crash_point raises the crash if this is the armed thread's n-th line.
void crash_point() {
  if (!crash_armed_here() || g_crash_seen != g_crash_line) return;
  g_crash_fired.store(true);
  raise(SIGTERM);
}

// on_crash: the handler. Its Fatal line is recorded as ET_LOG records one
// (the telemetry's line event: the ledger's), then handed to the sink
// through logjam::fatal, the header's entry for a crash handler; then the
// runtime aborts.
void on_crash(int) {
  std::string b = line_of('F', "crash_handler.cpp", 77, "*** SIGTERM received: the crash handler's context ***");
  logjam::fatal(b);
  emit("abort", "\"why\":\"fatal log line\"");
  abort();
}

PyObject *m_arm_crash(PyObject *, PyObject *args) {
  int n;
  if (!PyArg_ParseTuple(args, "i", &n)) return NULL;
  struct sigaction sa {};
  sa.sa_handler = on_crash;
  sigaction(SIGTERM, &sa, nullptr);
  g_crash_line = n;
  g_crash_seen = 0;
  g_crash_fired.store(false);
  g_crash_tid.store(gettid_());
  Py_RETURN_NONE;
}

}  // namespace
