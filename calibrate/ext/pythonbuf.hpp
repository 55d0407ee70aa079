// pystderr's streambuf when pybind11's own is not built in, written after pybind11 2.10's pythonbuf.
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"

namespace {

struct py_error : std::runtime_error { py_error() : std::runtime_error("error_already_set") {} };

// pythonbuf after pybind11/iostream.h (2.10): put area of 1024 bytes; sync
// and overflow write the complete UTF-8 prefix through sys.stderr (GIL
// taken) and throw when Python raised.
class pythonbuf : public std::streambuf {
  char d_buffer[1024];
  int overflow(int c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return _sync() == 0 ? traits_type::not_eof(c) : traits_type::eof();
  }
  size_t utf8_remainder() const {
    const char *rbase = pptr() - 1;
    const char *rpend = pbase() - 1;
    const char *rpptr = pptr();
    const char *leading = rbase;
    while (leading != rpend && ((unsigned char)*leading & 0xc0) == 0x80) leading--;
    if (leading == rpend) return 0;
    unsigned char c = (unsigned char)*leading;
    size_t dist = (size_t)(rpptr - leading);
    if ((c & 0x80) == 0x00) return 0;
    if ((c & 0xe0) == 0xc0 && dist < 2) return dist;
    if ((c & 0xf0) == 0xe0 && dist < 3) return dist;
    if ((c & 0xf8) == 0xf0 && dist < 4) return dist;
    return 0;
  }
  int _sync() {
    if (pbase() != pptr()) {
      PyGILState_STATE g = PyGILState_Ensure();
      size_t size = (size_t)(pptr() - pbase());
      size_t remainder = utf8_remainder();
      bool failed = false;
      if (size > remainder) {
        PyObject *line = PyUnicode_FromStringAndSize(pbase(), (Py_ssize_t)(size - remainder));  // strict
        if (!line) failed = true;
        else {
          PyObject *err = PySys_GetObject("stderr");
          Py_XINCREF(err);
          PyObject *r = err ? PyObject_CallMethod(err, "write", "O", line) : NULL;
          Py_DECREF(line);
          if (!r) failed = true;
          else {
            Py_DECREF(r);
            r = PyObject_CallMethod(err, "flush", NULL);
            if (!r) failed = true; else Py_DECREF(r);
          }
          Py_XDECREF(err);
        }
      }
      if (remainder > 0) memmove(pbase(), pptr() - remainder, remainder);
      setp(pbase(), epptr());
      pbump((int)remainder);
      if (failed) {
        emit("pythonbuf-throws", "\"thread\":" + jstr(ts.name));
        PyErr_Clear();  // pybind11 moves it into error_already_set
        PyGILState_Release(g);
        throw py_error();
      }
      PyGILState_Release(g);
    }
    return 0;
  }
  int sync() override { return _sync(); }

 public:
  pythonbuf() { setp(d_buffer, d_buffer + sizeof(d_buffer) - 1); }
};
pythonbuf *g_pybuf = nullptr;

}  // namespace
