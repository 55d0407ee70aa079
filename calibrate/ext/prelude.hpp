// What every part includes first: Python (PY_SSIZE_T_CLEAN first), pybind11 if built in, the header, std, POSIX.
#pragma once

#define PY_SSIZE_T_CLEAN
#if defined(LOGJAM_PYBIND11)
// pystderr through pybind11's own pythonbuf (Debian's pybind11-dev), when
// the build found it and it compiles against this interpreter.
#include <pybind11/pybind11.h>
#include <pybind11/iostream.h>
#endif
#include "logjam/logjam.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <fcntl.h>
#include <iostream>
#include <memory>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>
