// A deliberately broken sink: it writes each line through sys.stderr
// assuming the GIL is held whenever the runtime logs, as it is in a binding
// call. A native worker thread of the runtime (row D3: the call's thread
// pool) has no Python thread state and no GIL: calling into Python there
// is undefined behaviour, which real CPython ends with a fatal error or a
// segfault. The real column must call such a run a CRASH, with evidence,
// never a hang or a pass.
#include "logjam/logjam.hpp"

namespace {
struct PythonWithoutGIL : logjam::Sink {
  const char *name() const override { return "python-without-gil"; }
  void enter() override {}
  void emit(char, const std::string &line) override {
    PyObject *err = PySys_GetObject("stderr");  // no PyGILState_Ensure: the bug
    PyObject *text = logjam::decode_escaped(line);
    if (err && text) {
      PyObject *r = PyObject_CallMethod(err, "write", "O", text);
      Py_XDECREF(r);
    }
    Py_XDECREF(text);
    PyErr_Clear();
  }
  bool exit() override { return true; }
};
}  // namespace

logjam::Sink *logjam_make_sink() { return new PythonWithoutGIL(); }
