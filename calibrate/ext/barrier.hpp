// The schedule threads' wait states, read from /proc, and the barriers that wait on them.
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"
#include "proc.hpp"
#include "backend.hpp"

namespace {

// waits_for: what thread tid waits for, read from /proc/self/task/TID
// (syscall, wchan), or "" while it runs or sleeps in a wait that ends by
// itself (a write(2) that contends for the pipe's mutex, the GIL's own
// mutex). take_gil's COND_TIMED_WAIT is the only timed futex wait here
// ("202 uaddr 0x89 val timeout"); a semaphore or condition (a
// BufferedWriter's lock, a join) waits untimed; a backend's std::mutex is
// FUTEX_WAIT on its own address.
std::string waits_for(long tid, std::string *sc_out) {
  std::string base = "/proc/self/task/" + std::to_string(tid) + "/";
  if (!asleep(tid)) return "";
  std::string sc = read_file(base + "syscall");
  *sc_out = sc.substr(0, sc.find('\n'));
  unsigned long nr = ~0UL, a1 = 0, op = 0, val = 0, timeout = 0;
  if (sscanf(sc.c_str(), "%lu %lx %lx %lx %lx", &nr, &a1, &op, &val, &timeout) < 1) return sc.empty() ? "its end" : "";
  if (nr == 202 && (op & 0x7f) == 9) return timeout != 0 ? "the GIL" : "a semaphore or a condition";
  if (nr == 202 && (op & 0x7f) == 0)
    for (auto &m : g_sched_backends)
      if (a1 == (unsigned long)(void *)&m) return "a backend's lock";
  if (nr == 1 && read_file(base + "wchan").find("pipe_write") != std::string::npos) return "room on a pipe (write(2))";
  if (nr == 7 || nr == 271) {  // poll, ppoll: logjam's bounded wait for room on fd 2
    struct pollfd q{};
    struct iovec local = {&q, sizeof q}, remote = {(void *)a1, sizeof q};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof q && q.fd == 2 && (q.events & POLLOUT))
      return "room on fd 2 (poll)";
  }
  return "";
}

// The forwarder's read barrier, as the model's (sim FD2Capture.awaitRead):
// a capture's forwarder reads only when every schedule thread waits for
// something only the process can end (waits_for) or has ended, and the
// pipe holds bytes, or once the capture is closing. A real forwarder that
// read whenever bytes arrived asked for the GIL as a third contender at a
// moment the scheduler chose (RF3 unbuffered: OK or LOST, docs/FINDINGS.md).
std::mutex g_barrier_mu;
std::vector<long> g_barrier_tids;      // the schedule's threads
std::atomic<bool> g_capture_closing{false};

PyObject *m_barrier_thread(PyObject *, PyObject *) {
  std::lock_guard<std::mutex> g(g_barrier_mu);
  g_barrier_tids.push_back((long)syscall(SYS_gettid));
  Py_RETURN_NONE;
}

PyObject *m_capture_closing(PyObject *, PyObject *) {
  g_capture_closing = true;
  Py_RETURN_NONE;
}

// blocked: thread tid waits (waits_for) or sleeps on any lock without a
// timeout (a plain FUTEX_WAIT: stdio's lock on stderr, a lock of the
// header's). The GIL's own mutex is such a lock too, but its holder runs,
// so a barrier over every schedule thread never holds on it alone.
bool blocked(long tid) {
  std::string sc;
  if (!waits_for(tid, &sc).empty()) return true;
  unsigned long nr = ~0UL, a1 = 0, op = 0;
  // sc is read only while tid sleeps (waits_for): empty otherwise.
  return sscanf(sc.c_str(), "%lu %lx %lx", &nr, &a1, &op) == 3 && nr == 202 && (op & 0x7f) == 0;
}

// barrier_threads: the schedule's threads registered so far.
std::vector<long> barrier_threads() {
  std::lock_guard<std::mutex> g(g_barrier_mu);
  return g_barrier_tids;
}

// read_on_barrier(fd, chunk): os.read(fd, chunk) once the barrier holds.
PyObject *m_read_on_barrier(PyObject *, PyObject *args) {
  int fd, chunk;
  if (!PyArg_ParseTuple(args, "ii", &fd, &chunk)) return NULL;
  std::string buf((size_t)chunk, '\0');
  ssize_t n;
  PyThreadState *st = PyEval_SaveThread();
  for (;;) {
    if (g_capture_closing.load()) break;
    bool all = true;
    for (long tid : barrier_threads())
      if (!blocked(tid)) { all = false; break; }
    int queued = 0;
    if (all && ioctl(fd, FIONREAD, &queued) == 0 && queued > 0) break;
    nap();
  }
  do n = read(fd, &buf[0], (size_t)chunk);
  while (n < 0 && errno == EINTR);
  PyEval_RestoreThread(st);
  if (n < 0) return PyErr_SetFromErrno(PyExc_OSError);
  return PyBytes_FromStringAndSize(buf.data(), n);
}

// wait_waits: the model's seeded switch point (WaitUntilIdle): until thread
// tid waits for something (waits_for) or has ended. One that waits for the
// GIL must also have asked for a forced switch (it slept there anew: its
// first timed wait ran out, so it set the drop request): the holder's next
// release then hands the GIL to it, whatever the scheduler does, as the
// model's FIFO handoff. Without it, a holder whose own write(2) returned at
// once could take the GIL back before the waiter woke, and a waiter caught
// asleep on the pipe's mutex inside a write(2) that had room was taken for
// one that waits (RF3 under pystderr: OK or HANG). The state seen is kept
// as evidence.
void wait_waits(long tid) {
  long first = -1;
  std::string what, sc;
  for (;;) {
    what = waits_for(tid, &sc);
    if (what == "the GIL") {
      long v = voluntary_switches(tid);
      if (first < 0) first = v;
      else if (v > first) break;
    } else if (!what.empty()) {
      break;
    } else {
      first = -1;
    }
    nap();
  }
  emit("observed", "\"thread\":" + jstr(ts.name) + ",\"waits\":" + jstr("until thread " + std::to_string(tid) + " waits: it waits for " + what +
       (what == "the GIL" ? " (a forced switch asked)" : "") + "; syscall " + sc) + ",\"then\":\"logs\"");
}

// settle_others: the model's GIL release barrier (sim Thread.ReleaseGIL)
// before a call's leave, where its sink may let the GIL go to write: every
// other schedule thread waits (blocked) or has ended, so a write(2) another
// thread began without the GIL is over before this one's begins (RF3
// buffered, python -u: T2's line landed inside MainThread's 15 KB write).
void settle_others() {
  long self = (long)syscall(SYS_gettid);
  for (long tid : barrier_threads())
    while (tid != self && !blocked(tid)) nap();
}

// settle_daemons(tids): the model's barrier before finalization (sim
// programs/daemon.go, daemonsLogAtExit), run as the last atexit callback,
// GIL held: until each daemon thread waits (waits_for: queued for the GIL
// again, or for something else) or has ended; daemons_gone then waits for
// them to end, later in finalization. A daemon that let the GIL go
// for its write(2) has not run it yet when main takes the GIL back; without
// the barrier the process could finalize and exit before that write ran
// (T1 under buffered: LOST on a loaded machine instead of the model's
// CRASH, 4 of 50 runs with the real cells played side by side). Each
// daemon's wait seen is reported as evidence.
std::vector<long> g_daemon_tids;

// daemons_gone: the module's m_free, during finalization (its modules
// cleared, the interpreter not yet deleted), GIL held: once daemons were
// settled, until each daemon thread has ended, at most 1 s. A daemon's GIL
// wait times out every switch interval and, finalization under way, ends
// the thread (or unwinds it through the frame it waits in: the policy's
// CRASH). Left waiting, on 3.10 a daemon that times out only after the
// interpreter was deleted reads it (SIGSEGV in take_gil: CRASH where the
// model says OK, 1 of 120 real T1 runs on a loaded machine). The bound is
// for a daemon that waits for something else for good (a BufferedWriter
// lock another daemon holds).
void daemons_gone(void *) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (long tid : g_daemon_tids) {
    for (char s = task_state(tid); s != 0 && s != 'Z' && s != 'X'; s = task_state(tid)) {  // until it has ended
      if (std::chrono::steady_clock::now() >= until) return;
      nap();
    }
  }
}

PyObject *m_settle_daemons(PyObject *, PyObject *args) {
  PyObject *list;
  if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &list)) return NULL;
  std::vector<long> tids;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) tids.push_back(PyLong_AsLong(PyList_GET_ITEM(list, i)));
  if (PyErr_Occurred()) return NULL;
  for (long tid : tids) {
    std::string what, sc;
    while ((what = waits_for(tid, &sc)).empty()) nap();
    emit("observed", "\"thread\":\"MainThread\",\"waits\":" + jstr("until daemon thread " + std::to_string(tid) + " waits: it waits for " + what) +
         ",\"then\":\"finalizes\"");
  }
  g_daemon_tids = tids;  // daemons_gone waits for them at the module's end
  Py_RETURN_NONE;
}

}  // namespace
