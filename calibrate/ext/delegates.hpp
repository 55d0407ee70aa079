// Native call bodies that log: a delegate's lines (paced, or with a SIGINT asked for), a pool's, an abort.
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"
#include "etlog.hpp"
#include "signals.hpp"
#include "proc.hpp"

namespace {

PyObject *m_abort(PyObject *, PyObject *) {  // the delegate aborts (no fatal line)
  emit("abort", "\"why\":\"delegate abort\"");
  abort();
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

}  // namespace
