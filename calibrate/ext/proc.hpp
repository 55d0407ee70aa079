// What a thread of this process does, read from /proc/self/task/TID, and the poll interval between reads.
#pragma once

#include "prelude.hpp"

namespace {

std::string read_file(const std::string &path) {
  FILE *f = fopen(path.c_str(), "r");
  if (!f) return "";
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return std::string(buf, n);
}

// blocked_in_write: the thread is asleep in write(2) on a pipe.
bool blocked_in_write(long tid) {
  std::string base = "/proc/self/task/" + std::to_string(tid) + "/";
  std::string sc = read_file(base + "syscall");
  if (sc.rfind("1 ", 0) != 0) return false;
  return read_file(base + "wchan").find("pipe_write") != std::string::npos;
}

bool in_futex(long tid) {
  std::string sc = read_file("/proc/self/task/" + std::to_string(tid) + "/syscall");
  return sc.rfind("202 ", 0) == 0;
}

void nap() { struct timespec t = {0, 500000}; nanosleep(&t, nullptr); }  // a poll interval, not a sync

// voluntary_switches: how many times thread tid has gone to sleep (a new
// wait shows as a higher count).
long voluntary_switches(long tid) {
  std::string st = read_file("/proc/self/task/" + std::to_string(tid) + "/status");
  size_t i = st.find("voluntary_ctxt_switches:");
  if (i == std::string::npos || (i > 0 && st[i - 1] != '\n')) {
    i = st.find("\nvoluntary_ctxt_switches:");
    if (i == std::string::npos) return -1;
    i++;
  }
  return atol(st.c_str() + i + strlen("voluntary_ctxt_switches:"));
}

// task_state: thread tid's state letter from its stat line (R, S, D, Z,
// ...), 0 once it has ended, '?' when the line cannot be read as one.
char task_state(long tid) {
  std::string st = read_file("/proc/self/task/" + std::to_string(tid) + "/stat");
  if (st.empty()) return 0;  // ended
  size_t r = st.rfind(')');
  return r != std::string::npos && r + 2 < st.size() ? st[r + 2] : '?';
}

// asleep: thread tid sleeps (state S or D), or has ended.
bool asleep(long tid) {
  char s = task_state(tid);
  return s == 0 || s == 'S' || s == 'D';
}

}  // namespace
