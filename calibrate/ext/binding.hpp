// The binding's own methods: setup (the policy's sink), call and call_named, log, fail, emit, tids.
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"
#include "etlog.hpp"
#include "pythonbuf.hpp"
#include "sinks.hpp"
#include "waitfor.hpp"

// A user's sink, when one is built in (its FILE.cpp defines it).
logjam::Sink *logjam_make_sink() __attribute__((weak));

namespace {

PyObject *m_setup(PyObject *, PyObject *args) {
  const char *pol;
  int fd;
  if (!PyArg_ParseTuple(args, "si", &pol, &fd)) return NULL;
  std::string p = pol;
  if (p == "pystderr") g_policy = PYSTDERR;
  else if (p == "fd2") g_policy = FD2;
  else if (p == "buffered") g_policy = BUFFERED;
  else if (p == "adaptive") g_policy = ADAPTIVE;
  else if (p == "merged") g_policy = MERGED;
  else if (p == "logjam") g_policy = LOGJAM;
  else if (p == "user") g_policy = USER;
  else { PyErr_Format(PyExc_ValueError, "unknown policy %s", pol); return NULL; }
  g_tel = fd;
  logjam::Sink *s = nullptr;
  switch (g_policy) {
    case PYSTDERR:
      std::cerr.setf(std::ios::unitbuf);
#if !defined(LOGJAM_PYBIND11)
      if (!g_pybuf) {
        g_pybuf = new pythonbuf();
        std::cerr.rdbuf(g_pybuf);
      }
#endif
      s = new PyStderrSink();
      break;
    case FD2: s = new Fd2Sink(); break;
    case BUFFERED: s = new BufferedSink(); break;
    case ADAPTIVE: s = new AdaptiveSink(false); break;
    case MERGED: s = new AdaptiveSink(true); break;
    case LOGJAM: s = new logjam::Logjam(); break;
    case USER:
      if (!logjam_make_sink || !(s = logjam_make_sink())) {
        PyErr_SetString(PyExc_ValueError, "no user sink built in (logjam_make_sink)");
        return NULL;
      }
      break;
  }
  static TelemetryObserver tel_observer;
  logjam::set_observer(&tel_observer);
  logjam::install(s);
  announce_waitfor();
  Py_RETURN_NONE;
}

PyObject *m_emit(PyObject *, PyObject *args) {  // a JSON object's text, one line
  const char *s;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "s#", &s, &n)) return NULL;
  std::string line(s, (size_t)n);
  Py_BEGIN_ALLOW_THREADS
  tel_raw(line + "\n");
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

PyObject *m_log(PyObject *, PyObject *args) {
  const char *lvl, *file;
  int lineno;
  const char *msg;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "ssiy#", &lvl, &file, &lineno, &msg, &n)) return NULL;
  et_log(lvl[0], file, lineno, std::string(msg, (size_t)n));
  Py_RETURN_NONE;
}

PyObject *m_fail(PyObject *, PyObject *args) {  // THROW_IF_ERROR inside a call
  const char *type, *msg;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "sy#", &type, &msg, &n)) return NULL;
  ts.has_err = true;
  ts.err_type = type;
  ts.err_msg.assign(msg, (size_t)n);
  Py_RETURN_NONE;
}

// call(fn, *args): a binding call (GIL held throughout).
PyObject *m_call(PyObject *, PyObject *args) {
  Py_ssize_t n = PyTuple_Size(args);
  if (n < 1) { PyErr_SetString(PyExc_TypeError, "call(fn, *args)"); return NULL; }
  name_thread();
  PyObject *fn = PyTuple_GetItem(args, 0);
  PyObject *rest = PyTuple_GetSlice(args, 1, n);
  if (!in_call()) ts.errs.clear();
  logjam::enter();
  ts.has_err = false;
  PyObject *r = PyObject_Call(fn, rest, NULL);
  Py_DECREF(rest);
  Exc exc;
  if (!r) exc = Exc::fetch();
  else if (ts.has_err) {
    ts.has_err = false;
    Py_CLEAR(r);
    raise_native(ts.err_type, ts.err_msg);
    exc = Exc::fetch();
  }
  bool outermost = logjam::this_thread().depth == 1;
  Exc ferr;
  if (!logjam::leave()) ferr = Exc::fetch();
  if (ferr.set() && (!exc.set() || is_ki(ferr.t))) { exc.drop(); exc = ferr; }
  else ferr.drop();
  if (outermost && !exc.set() && PyErr_CheckSignals() < 0) { Py_CLEAR(r); exc = Exc::fetch(); }
  if (exc.set()) {
    Py_XDECREF(r);
    exc.restore();
    return NULL;
  }
  if (!r) Py_RETURN_NONE;
  return r;
}

// emit_exception reports a fetched exception (t, v, tb: PyErr_Fetch's,
// kept, maybe normalized) as an "exception" event of call on this thread.
void emit_exception(const std::string &call, PyObject *&t, PyObject *&v, PyObject *&tb) {
  std::string type = t && PyType_Check(t) ? ((PyTypeObject *)t)->tp_name : "?";
  std::string text;
  if (t && PyErr_GivenExceptionMatches(t, PyExc_KeyboardInterrupt)) {
    // Its text without normalizing it or calling str(): either can reach
    // the eval loop's pending-signal check, run a second SIGINT's handler
    // here, and its KeyboardInterrupt would be lost.
    PyObject *a = v && PyExceptionInstance_Check(v) ? ((PyBaseExceptionObject *)v)->args : nullptr;
    PyObject *s0 = a && PyTuple_Check(a) && PyTuple_GET_SIZE(a) == 1 ? PyTuple_GET_ITEM(a, 0) : (v && PyUnicode_Check(v) ? v : nullptr);
    Py_ssize_t len = 0;
    const char *u = s0 && PyUnicode_Check(s0) ? PyUnicode_AsUTF8AndSize(s0, &len) : nullptr;
    if (u) text.assign(u, (size_t)len);
  } else {
    PyErr_NormalizeException(&t, &v, &tb);
    if (PyObject *str = v ? PyObject_Str(v) : nullptr) {
      if (PyObject *b = PyUnicode_AsEncodedString(str, "utf-8", "backslashreplace")) {
        text.assign(PyBytes_AsString(b), (size_t)PyBytes_Size(b));
        Py_DECREF(b);
      }
      Py_DECREF(str);
    }
  }
  PyErr_Clear();
  emit("exception", "\"thread\":" + jstr(ts.name) + ",\"call\":" + jstr(call) + ",\"type\":" + jstr(type) + ",\"text\":" + jtext(text));
}

// call_named(name, fn, *args): call(fn, *args), and the exception it
// raises to the caller reported natively ("exception"), before the eval
// loop can run a pending SIGINT handler in the caller's except clause.
PyObject *m_call_named(PyObject *self, PyObject *args) {
  Py_ssize_t n = PyTuple_Size(args);
  if (n < 2) { PyErr_SetString(PyExc_TypeError, "call_named(name, fn, *args)"); return NULL; }
  PyObject *nm = PyTuple_GetItem(args, 0);
  const char *cname = PyUnicode_Check(nm) ? PyUnicode_AsUTF8(nm) : nullptr;
  std::string name = cname ? cname : "?";
  PyObject *rest = PyTuple_GetSlice(args, 1, n);
  PyObject *r = m_call(self, rest);
  Py_DECREF(rest);
  if (r) return r;
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  emit_exception(name, t, v, tb);
  PyErr_Restore(t, v, tb);
  return NULL;
}

PyObject *m_tid(PyObject *, PyObject *) { return PyLong_FromLong(gettid_()); }

PyObject *m_direct_tid(PyObject *, PyObject *) { return PyLong_FromLong(g_direct_tid.load()); }

PyObject *m_flush_outside(PyObject *, PyObject *) {
  if (!logjam::flush_outside()) return NULL;
  Py_RETURN_NONE;
}

}  // namespace
