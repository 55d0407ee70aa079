// The binding's per-thread state beside logjam::this_thread(), and the thread's kernel id and Python name.
#pragma once

#include "prelude.hpp"

namespace {

thread_local int t_seq = 0;  // the sequence number of the line this thread is emitting

long gettid_() { return syscall(SYS_gettid); }

// The binding's per-thread state beside logjam::this_thread() (depth, name,
// daemon): the call's Error lines for the exception text, a pending native
// error, and the historical sinks' per-call state.
struct ThreadState {
  bool direct = false, stalled = false;
  logjam::KeepBuffer kept;
  std::string errs;            // the call's Error lines, up to 1024 bytes
  bool has_err = false;        // a native error (THROW_IF_ERROR) is pending
  std::string err_type, err_msg;
  bool named = false;
  std::string name = "?";
  bool daemon = false;
};
thread_local ThreadState ts;

// name_thread: the thread's Python name and daemon flag (GIL held); the
// name also becomes the OS thread's name (comm), so a wait state read from
// outside (/proc/PID/task/TID/comm) says which thread it is.
void name_thread() {
  if (ts.named) return;
  logjam::ThreadInfo &ti = logjam::identify();
  if (!ti.known) return;
  ts.named = true;
  ts.name = ti.name;
  ts.daemon = ti.daemon;
  pthread_setname_np(pthread_self(), ts.name.substr(0, 15).c_str());
}

bool in_call() { return logjam::in_call(); }
bool stderr_replaced() { return logjam::stderr_replaced(); }

}  // namespace
