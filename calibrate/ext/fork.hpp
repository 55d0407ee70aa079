// Row D5's T1: a native thread that holds the sink's own lock until a fork begins.
#pragma once

#include "thread.hpp"
#include "proc.hpp"

// The sink's own lock, held from another thread as the header's tests
// hold it (calibrate/headertest: LogjamTestAccess).
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

}  // namespace
