// The telemetry wire: JSON lines in cmd/simrt's format on the fd setup() names.
#pragma once

#include "prelude.hpp"

namespace {

int g_tel = -1;
std::mutex g_tel_mu;
// The telemetry lines written (each ended with '\n'), counted before the
// write: the parent reads it (waitfor.hpp) to know none is still unread.
std::atomic<unsigned long> g_tel_lines{0};

std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();

const char *b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::string &in) {
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += b64[v >> 18 & 63]; out += b64[v >> 12 & 63]; out += b64[v >> 6 & 63]; out += b64[v & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += b64[v >> 18 & 63]; out += b64[v >> 12 & 63]; out += "==";
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += b64[v >> 18 & 63]; out += b64[v >> 12 & 63]; out += b64[v >> 6 & 63]; out += '=';
  }
  return out;
}

// jstr quotes s as a JSON string (s is text we produced: ASCII or UTF-8).
std::string jstr(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
    else if (c < 0x20 || c >= 0x80) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += (char)c;
  }
  return o + "\"";
}

// jtext quotes UTF-8 text as a JSON string, its characters as they are.
std::string jtext(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
    else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += (char)c;
  }
  return o + "\"";
}

double ms_since_start() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_start).count();
}

void tel_raw(const std::string &line) {
  if (g_tel < 0) return;
  std::lock_guard<std::mutex> g(g_tel_mu);
  g_tel_lines += (unsigned long)std::count(line.begin(), line.end(), '\n');
  const char *p = line.data();
  size_t n = line.size();
  while (n > 0) {
    ssize_t w = write(g_tel, p, n);
    if (w < 0) { if (errno == EINTR) continue; return; }
    p += w; n -= (size_t)w;
  }
}

// emit writes {"ev":ev, fields..., "t":ms}; fields is "" or `"k":v,...`.
void emit(const char *ev, const std::string &fields) {
  if (g_tel < 0) return;
  char t[64];
  snprintf(t, sizeof t, "\"t\":%.3f", ms_since_start());
  tel_raw(std::string("{\"ev\":") + jstr(ev) + "," + (fields.empty() ? "" : fields + ",") + t + "}\n");
}

}  // namespace
