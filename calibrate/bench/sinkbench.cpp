// sinkbench: the per-line cost of logjam.hpp against a raw fwrite to the
// unbuffered C stderr, measured in C++ with nothing else per line (no
// telemetry, no formatting, no Python call per line). A CPython extension
// only because the header needs a live interpreter (the GIL, sys.stderr);
// one Python call runs a whole measurement.
//
//   run(mode, n, lines_per_call) -> (wall ns, writer-thread CPU ns) per line
//   mode 0: raw fwrite; 1: logjam (enter, log, leave around each call)
//   drain(fd): a native thread reading fd to EOF (a drained pipe, a pty's master)
//
// Built as module sinkbench, and with -DSINKBENCH_MODULE=sinkbench_base
// against another commit's header (calbench -base): each module has its
// own copy of the header and its state.
#include "logjam/logjam.hpp"

#include <chrono>
#include <csignal>
#include <pthread.h>
#include <string>
#include <thread>
#include <vector>

namespace {

PyObject *run(PyObject *, PyObject *args) {
  int mode;
  long n, per_call;
  if (!PyArg_ParseTuple(args, "ill", &mode, &n, &per_call)) return NULL;
  if (per_call < 1) per_call = 1;
  // A 128-byte line, as the runtime formats it.
  std::string line = "I 00:00:01.000001 executorch:method.cpp:1172] ";
  while (line.size() < 127) line += 'x';
  line += '\n';
  struct timespec c0, c1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  auto t0 = std::chrono::steady_clock::now();
  if (mode == 0) {
    for (long i = 0; i < n; i++) fwrite(line.data(), 1, line.size(), stderr);
  } else {
    for (long i = 0; i < n;) {
      logjam::enter();
      for (long j = 0; j < per_call && i < n; j++, i++) logjam::log('I', line);
      if (!logjam::leave()) return NULL;
    }
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
  return Py_BuildValue("(dd)", ns / (double)n, cpu / (double)n);
}

PyObject *drain(PyObject *, PyObject *args) {
  int fd;
  if (!PyArg_ParseTuple(args, "i", &fd)) return NULL;
  std::thread([fd] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::vector<char> buf(1 << 16);
    for (;;) {
      ssize_t r = read(fd, buf.data(), buf.size());
      if (r > 0 || (r < 0 && errno == EINTR)) continue;
      break;
    }
    close(fd);
  }).detach();
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "run(mode, n, lines_per_call) -> (wall ns, cpu ns) per line"},
    {"drain", drain, METH_VARARGS, "drain(fd): read fd to EOF in a native thread"},
    {nullptr, nullptr, 0, nullptr}};

#ifndef SINKBENCH_MODULE
#define SINKBENCH_MODULE sinkbench
#endif
#define SINKBENCH_STR2(x) #x
#define SINKBENCH_STR(x) SINKBENCH_STR2(x)
#define SINKBENCH_CAT2(a, b) a##b
#define SINKBENCH_CAT(a, b) SINKBENCH_CAT2(a, b)

PyModuleDef moddef = {PyModuleDef_HEAD_INIT, SINKBENCH_STR(SINKBENCH_MODULE), "logjam.hpp's per-line cost", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC SINKBENCH_CAT(PyInit_, SINKBENCH_MODULE)(void) {
  logjam::install(new logjam::Logjam());
  return PyModule_Create(&moddef);
}
