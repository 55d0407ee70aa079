// The runtime's backends, each its own lock L, and the call bodies that take it (D1's A and B, F2's worker).
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"
#include "etlog.hpp"
#include "proc.hpp"

namespace {

// D1's backend: its lock L, A holding it (backend_load_fail), B's steps toward it (backend_execute).

std::mutex g_backend_L;
std::mutex g_a_mu;
std::condition_variable g_a_cv;
bool g_a_locked = false;  // A holds L (backend_load_fail)
std::atomic<int> g_b_step{0};  // 1: B is about to take L, 2: B got it
std::atomic<long> g_b_tid{0};

std::mutex g_sched_backends[2];  // the schedule's two backends, each its own lock L
const char *const g_sched_backend_names[2] = {"xnnpack", "vulkan"};

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

// b_progress(): B has got L, or is blocked on it (futex after "waits-L").
PyObject *m_b_progress(PyObject *, PyObject *) {
  int st = g_b_step.load();
  if (st == 2 || (st == 1 && in_futex(g_b_tid.load()))) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
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

}  // namespace
