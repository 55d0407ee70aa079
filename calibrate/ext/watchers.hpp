// Native watcher threads (no GIL) standing where the parent would watch the child, cueing it by marks.
#pragma once

#include "telemetry.hpp"
#include "sinks.hpp"
#include "signals.hpp"
#include "proc.hpp"
#include "backend.hpp"

namespace {

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

}  // namespace
