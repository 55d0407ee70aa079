// The runtime's logging: ET_LOG's line (text rules, stamp) and THROW_IF_ERROR's exception, through the sink.
#pragma once

#include "telemetry.hpp"
#include "thread.hpp"

namespace {

void crash_logged();  // crash.hpp: row F10's crash, counted and raised around the sink
void crash_point();

std::atomic<int> g_seq{0};
std::mutex g_clock_mu;
long long g_last_us = -1;

size_t valid_prefix_len(const std::string &b) {  // trims an incomplete UTF-8 tail
  size_t i = b.size();
  size_t k = 0;
  while (k < 3 && i > 0 && ((unsigned char)b[i - 1] & 0xc0) == 0x80) { i--; k++; }
  if (i == 0) return b.size();
  unsigned char lead = (unsigned char)b[i - 1];
  size_t need;
  if (lead < 0x80) return b.size();
  else if ((lead & 0xe0) == 0xc0) need = 2;
  else if ((lead & 0xf0) == 0xe0) need = 3;
  else if ((lead & 0xf8) == 0xf0) need = 4;
  else return b.size();
  if (b.size() - (i - 1) < need) return i - 1;
  return b.size();
}

std::string cstr(const std::string &b) { size_t z = b.find('\0'); return z == std::string::npos ? b : b.substr(0, z); }

std::string stamp() {
  std::lock_guard<std::mutex> g(g_clock_mu);
  long long us = (long long)std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - g_start).count();
  if (us <= g_last_us) us = g_last_us + 1;
  g_last_us = us;
  long long sec = us / 1000000;
  char b[64];
  snprintf(b, sizeof b, "%02lld:%02lld:%02lld.%06lld", sec / 3600, sec / 60 % 60, sec % 60, us % 1000000);
  return b;
}

// raise_native: THROW_IF_ERROR's exception: the message cut at 127 bytes
// (and at a NUL), the call's Error lines appended, raised by the sink.
void raise_native(const std::string &type, const std::string &formatted) {
  std::string main = cstr(formatted.substr(0, std::min<size_t>(formatted.size(), 127)));
  std::string full = main;
  if (!ts.errs.empty()) full += "\n" + ts.errs;
  PyObject *exc = type == "IndexError" ? PyExc_IndexError : PyExc_RuntimeError;
  logjam::raise(exc, full);
}

// line_of is ET_LOG's line (the 255-byte cut, an incomplete tail trimmed,
// the stamp), numbered and recorded in the ledger (the telemetry's line
// event), the call's Error lines kept for THROW_IF_ERROR: what et_log and
// row F10's crash handler hand the sink.
std::string line_of(char level, const std::string &file, int lineno, const std::string &msg_in) {
  std::string msg = msg_in.substr(0, std::min<size_t>(msg_in.size(), 255));
  msg = cstr(msg.substr(0, valid_prefix_len(msg)));
  int seq = ++g_seq;
  t_seq = seq;
  std::string b = std::string(1, level) + " " + stamp() + " executorch:" + file + ":" + std::to_string(lineno) + "] " + msg + "\n";
  if (level == 'E' && in_call() && ts.errs.size() < 1024) {
    std::string add = msg + "\n";
    ts.errs += add.substr(0, std::min<size_t>(add.size(), 1024 - ts.errs.size()));
  }
  if (g_tel >= 0)
    emit("line", "\"seq\":" + std::to_string(seq) + ",\"thread\":" + jstr(ts.name) + ",\"daemon\":" + (ts.daemon ? "true" : "false") +
                   ",\"level\":\"" + std::string(1, level) + "\",\"in_call\":" + (in_call() ? "true" : "false") +
                   ",\"replaced\":" + (stderr_replaced() ? "true" : "false") + ",\"b\":\"" + base64(b) + "\"");
  return b;
}

void et_log(char level, const std::string &file, int lineno, const std::string &msg_in) {  // GIL held
  name_thread();
  std::string b = line_of(level, file, lineno, msg_in);
  crash_logged();
  logjam::log(level, b);
  crash_point();
  if (level == 'F') {
    emit("abort", "\"why\":\"fatal log line\"");
    abort();
  }
}

}  // namespace
