// A random-found row's schedule played natively: each thread's calls back to back, the GIL's order as the model's.
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"
#include "etlog.hpp"
#include "binding.hpp"
#include "proc.hpp"
#include "backend.hpp"
#include "barrier.hpp"

namespace {

// A random-found row (RF*) played for real: run_row.py's row_R reads the
// schedule; each Python thread's calls run here natively, back to back, so
// no bytecode (and so no switch interval) lies between them: a thread lets
// the GIL go only where its sink does (a Python write, a released flush).

std::mutex g_gate_mu;
std::condition_variable g_gate_cv;
bool g_main_began = false;       // MainThread's calls have begun
std::atomic<int> g_gated{0};     // threads with calls waiting at the gate (no GIL)
std::atomic<int> g_asking{0};    // threads that now ask for the GIL

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

}  // namespace
