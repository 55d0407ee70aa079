// A deliberately broken sink, written from docs/SINK.md alone: every line
// goes through sys.stderr.write (taking the GIL if the thread lacks it),
// even while the runtime holds its backend lock. The write releases the GIL
// (FileIO.write), another thread takes it and waits for the backend lock:
// the matrix's pystderr HANG (D1).
#include "logjam/logjam.hpp"

namespace {
struct StderrUnderLock : logjam::Sink {
  const char *name() const override { return "stderr-under-lock"; }
  void enter() override {}
  void emit(char, const std::string &line) override {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *err = PySys_GetObject("stderr");
    PyObject *text = logjam::decode_escaped(line);
    if (err && text) {
      PyObject *r = PyObject_CallMethod(err, "write", "O", text);
      Py_XDECREF(r);
      r = PyObject_CallMethod(err, "flush", NULL);
      Py_XDECREF(r);
    }
    Py_XDECREF(text);
    PyErr_Clear();
    PyGILState_Release(g);
  }
  bool exit() override { return true; }
};
}  // namespace

logjam::Sink *logjam_make_sink() { return new StderrUnderLock(); }
