// logjamext: a small CPython extension that does, at the C-API level, what
// each log-sink policy of docs/SCENARIOS.md does, so real interpreters can play
// the matrix's rows. Built by calibrate/build.go (g++ -shared, no setuptools).
// This file is the module (its method table and init) and the build's one
// translation unit: it includes the parts below, one job each, so every
// part shares one anonymous namespace and the build compiles one file.
//
// Every sink is a logjam::Sink (calibrate/include/logjam/logjam.hpp): the
// five historical ones are in sinks.hpp; logjam is the header's own,
// included as a binding includes it; a user's sink (`logjam calibrate -sink
// FILE.cpp`) is linked in and made by its logjam_make_sink().
//
// Every binding call holds the GIL throughout (no release), as ExecuTorch's
// bindings do. The "backend" has its own std::mutex L and logs while
// holding it (D1). Telemetry goes to the fd named by setup() as JSON lines
// in the wire format of cmd/simrt (sim/runtime.go, sim/policy.go).
//
// pystderr is the real pre-fix sink: std::cerr with unitbuf whose rdbuf is
// a pybind11-pythonbuf-like streambuf (pybind11/iostream.h, 2.10): a
// 1024-byte put area; sync() takes the GIL, keeps an incomplete UTF-8 tail,
// decodes the rest strictly into a str, calls sys.stderr.write then
// sys.stderr.flush, and throws a C++ exception when either raises. When
// pybind11's headers are not found or do not compile against the
// interpreter, pythonbuf.hpp is that streambuf, written after its source.
#include "prelude.hpp"     // Python, pybind11 (if built in), logjam.hpp, std, POSIX
#include "telemetry.hpp"   // the telemetry wire
#include "thread.hpp"      // the binding's per-thread state
#include "etlog.hpp"       // ET_LOG and THROW_IF_ERROR
#include "pythonbuf.hpp"   // pystderr's streambuf without pybind11
#include "sinks.hpp"       // the five historical sinks, the telemetry observer
#include "binding.hpp"     // setup, call, log, fail: the binding's methods
#include "signals.hpp"     // SIGINT arrivals counted
#include "proc.hpp"        // /proc/self/task reads
#include "backend.hpp"     // the backends' locks and the bodies that take them
#include "delegates.hpp"   // call bodies that log
#include "watchers.hpp"    // native watchers that cue the parent
#include "fork.hpp"        // D5's sink-lock holder
#include "barrier.hpp"     // the schedule threads' wait states, the barriers
#include "waitfor.hpp"     // what the parent reads the wait-for state with: the GIL's place, the locks, the lines written
#include "schedules.hpp"   // random-found rows' schedules
#include "crash.hpp"       // row F10's crash handler

namespace {

PyMethodDef methods[] = {
    {"b_progress", m_b_progress, METH_NOARGS, ""},
    {"block_forever", m_block_forever, METH_NOARGS, ""},
    {"execute_paced", m_execute_paced, METH_VARARGS, ""},
    {"setup", m_setup, METH_VARARGS, "setup(policy, telemetry_fd)"},
    {"emit", m_emit, METH_VARARGS, "emit(json_text)"},
    {"log", m_log, METH_VARARGS, "log(level, file, line, msg_bytes)"},
    {"fail", m_fail, METH_VARARGS, "fail(type, msg_bytes): THROW_IF_ERROR"},
    {"call", m_call, METH_VARARGS, "call(fn, *args): a binding call"},
    {"call_named", m_call_named, METH_VARARGS, "call_named(name, fn, *args): call, its exception reported"},
    {"backend_load_fail", m_backend_load_fail, METH_VARARGS, ""},
    {"backend_execute", m_backend_execute, METH_NOARGS, ""},
    {"tid", m_tid, METH_NOARGS, ""},
    {"wait_a_locked", m_wait_a_locked, METH_NOARGS, ""},
    {"direct_tid", m_direct_tid, METH_NOARGS, ""},
    {"flush_outside", m_flush_outside, METH_NOARGS, ""},
    {"abort", m_abort, METH_NOARGS, ""},
    {"hook_sigint", m_hook_sigint, METH_NOARGS, ""},
    {"sigint_arrivals", m_sigint_arrivals, METH_NOARGS, ""},
    {"sigint_tid", m_sigint_tid, METH_NOARGS, "the thread the last SIGINT's C handler ran on"},
    {"watch", m_watch, METH_VARARGS, ""},
    {"execute_logging", m_execute_logging, METH_VARARGS, ""},
    {"arm_crash", m_arm_crash, METH_VARARGS, "arm_crash(n): row F10's crash handler interrupts this thread's n-th line from now"},
    {"hold_sink_lock", m_hold_sink_lock, METH_NOARGS, "hold_sink_lock(): a native thread T1 holds the sink's own lock until a fork begins"},
    {"join_sink_holder", m_join_sink_holder, METH_NOARGS, ""},
    {"execute_pool", m_execute_pool, METH_VARARGS, "execute_pool(workers, n, msglen): its pool's native threads log; joined with the GIL held"},
    {"watch_d1", m_watch_d1, METH_VARARGS, ""},
    {"watch_i7", m_watch_i7, METH_VARARGS, ""},
    {"call_over", m_call_over, METH_NOARGS, ""},
    {"run_calls", m_run_calls, METH_VARARGS, "run_calls(is_main, calls, askers)"},
    {"barrier_thread", m_barrier_thread, METH_NOARGS, "the calling thread is one the forwarder's read barrier waits for"},
    {"capture_closing", m_capture_closing, METH_NOARGS, "the forwarder reads freely from now on"},
    {"read_on_barrier", m_read_on_barrier, METH_VARARGS, "read_on_barrier(fd, chunk): os.read once every barrier thread waits"},
    {"log_outside", m_log_outside, METH_VARARGS, "log_outside(n, size)"},
    {"settle_daemons", m_settle_daemons, METH_VARARGS, "settle_daemons(tids): until each daemon thread waits or has ended (an atexit callback: the model's barrier before finalization)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "logjamext", "log-sink policies at the C-API level", -1, methods,
                      nullptr, nullptr, nullptr, daemons_gone};

}  // namespace

PyMODINIT_FUNC PyInit_logjamext(void) {
  PyObject *m = PyModule_Create(&moddef);
#if defined(LOGJAM_PYBIND11)
  if (m) PyModule_AddStringConstant(m, "pythonbuf", "pybind11 " PYBIND11_TOSTRING(PYBIND11_VERSION_MAJOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_MINOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_PATCH));
#else
  if (m) PyModule_AddStringConstant(m, "pythonbuf", "a copy of pybind11 2.10's");
#endif
  return m;
}
