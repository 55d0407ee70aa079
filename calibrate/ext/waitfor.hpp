// What the parent needs to read this process's wait-for state from outside: the GIL's place, the extension's locks, the telemetry written.
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"
#include "proc.hpp"
#include "backend.hpp"

namespace {

// The parent reads every thread's wait from /proc/PID/task (calibrate/
// waitfor.go). What /proc cannot say, the extension announces once, in a
// "waitfor" event before the row's "start":
//   - "gil_words": the futex words a thread waiting for the GIL sleeps on
//     (take_gil's timed wait on the GIL's condition): a native probe thread
//     asks for the GIL while setup() holds it, and its
//     /proc/self/task/TID/syscall names the word; glibc's condition has two
//     such words side by side (__g_signals[2]), 8-byte aligned, both named;
//   - "gil": the address of CPython's _gil_runtime_state (3.10-3.13: interval,
//     last_holder, locked, switch_number, then the condition whose words
//     those are), with "holder_at" and "locked_at" offsets, only when
//     checked here against what the GIL is now (locked, held by this
//     thread's state, the switch interval's microseconds), else 0; and
//     "tid_at", the offset of PyThreadState's native_thread_id (3.11 on;
//     0 before), so the parent can name the holder;
//   - "lines_at": the address of the count of telemetry lines written (ended
//     with '\n'), counted before each write: the parent confirms no hang
//     while a line (a mark it must answer, such as a SIGINT) is unread;
//   - "locks": the extension's own std::mutexes by address and name (a
//     glibc mutex keeps its owner's thread id at offset 8).

struct GilState {
  unsigned long interval;
  void *last_holder;
  int locked;
  unsigned long switch_number;
};

// read_self copies n bytes at addr of this process without faulting.
bool read_self(unsigned long addr, void *out, size_t n) {
  struct iovec local = {out, n}, remote = {(void *)addr, n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

// gil_word: the GIL's futex word a probe thread sleeps on; 0 if unseen
// within a second. GIL held by the caller.
unsigned long gil_word() {
  std::atomic<long> tid{0};
  std::thread probe([&tid] {
    tid = gettid_();
    PyGILState_STATE s = PyGILState_Ensure();
    PyGILState_Release(s);
  });
  while (tid.load() == 0) nap();
  unsigned long word = 0;
  std::string path = "/proc/self/task/" + std::to_string(tid.load()) + "/syscall";
  for (int i = 0; i < 2000 && word == 0; i++) {
    unsigned long nr = ~0UL, a1 = 0, op = 0, val = 0, timeout = 0;
    if (sscanf(read_file(path).c_str(), "%lu %lx %lx %lx %lx", &nr, &a1, &op, &val, &timeout) == 5 && nr == 202 &&
        (op & 0x7f) == 9 && timeout != 0 && asleep(tid.load()))
      word = a1;
    else
      nap();
  }
  Py_BEGIN_ALLOW_THREADS
  probe.join();
  Py_END_ALLOW_THREADS
  return word;
}

// switch_interval_us: sys.getswitchinterval() in microseconds, 0 if unread.
unsigned long switch_interval_us() {
  PyObject *sys = PyImport_ImportModule("sys");
  if (!sys) { PyErr_Clear(); return 0; }
  PyObject *v = PyObject_CallMethod(sys, "getswitchinterval", NULL);
  Py_DECREF(sys);
  if (!v) { PyErr_Clear(); return 0; }
  double s = PyFloat_AsDouble(v);
  Py_DECREF(v);
  return (unsigned long)(s * 1e6 + 0.5);
}

std::string hex(unsigned long v) {
  char b[32];
  snprintf(b, sizeof b, "\"0x%lx\"", v);
  return b;
}

// announce_waitfor emits the "waitfor" event (once; GIL held).
void announce_waitfor() {
  static bool done = false;
  if (done) return;
  done = true;
  unsigned long word = gil_word();
  std::string words = "[]", gil = "\"0x0\"";
  long tid_at = 0;
  if (word != 0) {
    unsigned long w0 = word & ~7UL;
    words = "[" + hex(w0) + "," + hex(w0 + 4) + "]";
    // The condition's words are __g_signals, at offset 40 of the 48-byte
    // pthread_cond_t, which starts 32 bytes into _gil_runtime_state.
    unsigned long base = w0 - 40 - 32;
    GilState g{};
    if (read_self(base, &g, sizeof g) && g.locked == 1 && g.last_holder == (void *)PyThreadState_Get() &&
        g.interval == switch_interval_us())
      gil = hex(base);
#if PY_VERSION_HEX >= 0x030B0000
    PyThreadState *me = PyThreadState_Get();
    if (me->native_thread_id == (unsigned long)gettid_()) tid_at = (long)offsetof(PyThreadState, native_thread_id);
#endif
  }
  std::string locks = "[{\"addr\":" + hex((unsigned long)&g_backend_L) + ",\"name\":\"the backend's lock L\"}";
  for (int i = 0; i < 2; i++)
    locks += ",{\"addr\":" + hex((unsigned long)&g_sched_backends[i]) + ",\"name\":" +
             jstr(std::string("the ") + g_sched_backend_names[i] + " backend's lock") + "}";
  locks += "]";
  emit("waitfor", "\"gil_words\":" + words + ",\"gil\":" + gil + ",\"holder_at\":" + std::to_string(offsetof(GilState, last_holder)) +
       ",\"locked_at\":" + std::to_string(offsetof(GilState, locked)) + ",\"tid_at\":" + std::to_string(tid_at) +
       ",\"lines_at\":" + hex((unsigned long)&g_tel_lines) + ",\"locks\":" + locks);
}

}  // namespace
