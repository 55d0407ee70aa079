// Real SIGINT arrivals, counted in C beneath Python's own handler.
#pragma once

#include "thread.hpp"

namespace {

std::atomic<int> g_sigint_arrivals{0};
struct sigaction g_py_sigint;

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

}  // namespace
