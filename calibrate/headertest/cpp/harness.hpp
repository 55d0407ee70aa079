// harness.hpp: what the header tests share. Each test forks a child; the
// child puts the fd under test on fd 2 (the header hard-codes fd 2),
// starts an embedded CPython (the header needs a live interpreter: the GIL,
// sys.stderr), installs logjam::Logjam and plays the rule; the parent is
// the reader of fd 2 and judges the exact bytes it received. Parent and
// child talk over a control socket, one text message a line.
#pragma once

#include "logjam/logjam.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace ht {

using Clock = std::chrono::steady_clock;

inline long ms_since(Clock::time_point t0) {
  return (long)std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}
inline long us_since(Clock::time_point t0) {
  return (long)std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
}
inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// line: "<tag>:<seq, 6 digits> <payload>\n", exactly size bytes; its head
// ("<tag>:<seq>") names it, the payload differs from line to line.
inline std::string line(const std::string &tag, int seq, size_t size = 80) {
  char head[64];
  snprintf(head, sizeof head, "%s:%06d ", tag.c_str(), seq);
  std::string s = head;
  for (size_t i = 0; s.size() + 1 < size; i++) s += (char)('a' + (seq + i) % 26);
  s += '\n';
  return s;
}
inline std::string lines(const std::string &tag, int from, int to, size_t size = 80) {
  std::string s;
  for (int i = from; i < to; i++) s += line(tag, i, size);
  return s;
}

// quote: bytes shown with \n and non-printables escaped.
inline std::string quote(const std::string &b, size_t max = 240) {
  std::string s;
  for (size_t i = 0; i < b.size() && i < max; i++) {
    unsigned char c = (unsigned char)b[i];
    if (c == '\n') s += "\\n";
    else if (c < 32 || c > 126) { char x[8]; snprintf(x, sizeof x, "\\x%02x", c); s += x; }
    else s += (char)c;
  }
  if (b.size() > max) s += "...";
  return s;
}

// same_bytes: got is exactly want; else where they part, and every line
// head seen twice (the sign of a line rewritten from its start).
inline testing::AssertionResult same_bytes(const std::string &got, const std::string &want) {
  if (got == want) return testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) i++;
  size_t from = i < 120 ? 0 : i - 120;
  auto r = testing::AssertionFailure();
  r << "fd 2's reader got " << got.size() << " bytes, want " << want.size() << "; they part at byte " << i
    << "\n  got:  ..." << quote(got.substr(from, 360)) << "\n  want: ..." << quote(want.substr(from, 360));
  // every line head of want ("<tag>:<6 digits> ", at each line's start),
  // counted wherever it is in got (a head may follow the part of a line
  // written before it)
  std::map<std::string, int> heads;
  for (size_t q = 0; q < want.size();) {
    size_t sp = want.find(' ', q), e = want.find('\n', q);
    if (sp != std::string::npos && (e == std::string::npos || sp < e)) heads[want.substr(q, sp + 1 - q)] = 0;
    if (e == std::string::npos) break;
    q = e + 1;
  }
  for (size_t c = got.find(':'); c != std::string::npos; c = got.find(':', c + 1)) {
    for (size_t k = std::min<size_t>(c, 4); k >= 1; k--) {
      auto h = heads.find(got.substr(c - k, k + 8));
      if (h != heads.end()) { h->second++; break; }
    }
  }
  int dup = 0;
  for (auto &h : heads)
    if (h.second > 1 && dup++ < 5) r << "\n  head " << h.first << " seen " << h.second << " times";
  return r;
}

// per_thread: got (whole lines) holds every line of want exactly once,
// whole, and each tag's lines in order; lines of different tags may
// interleave.
inline testing::AssertionResult per_thread(const std::string &got, const std::map<std::string, std::vector<std::string>> &want) {
  std::map<std::string, size_t> next;
  size_t p = 0, n = 0;
  while (p < got.size()) {
    size_t e = got.find('\n', p);
    if (e == std::string::npos) return testing::AssertionFailure() << "the last bytes are not a whole line: " << quote(got.substr(p));
    std::string l = got.substr(p, e + 1 - p);
    std::string tag = l.substr(0, l.find(':'));
    auto w = want.find(tag);
    if (w == want.end()) return testing::AssertionFailure() << "line " << n << " is no line of any thread (half a line, or two run together): " << quote(l);
    size_t &i = next[tag];
    if (i >= w->second.size()) return testing::AssertionFailure() << "line " << n << " is thread " << tag << "'s line past its last: " << quote(l);
    if (l != w->second[i]) return testing::AssertionFailure() << "line " << n << ": thread " << tag << "'s next line is " << quote(w->second[i]) << ", got " << quote(l) << " (out of order, duplicated or not whole)";
    i++;
    n++;
    p = e + 1;
  }
  for (auto &w : want)
    if (next[w.first] != w.second.size())
      return testing::AssertionFailure() << "thread " << w.first << ": " << next[w.first] << " of its " << w.second.size() << " lines reached fd 2's reader";
  return testing::AssertionSuccess();
}

// ---------------------------------------------------------------- fds

inline void write_all_fd(int fd, const std::string &b) {
  size_t off = 0;
  while (off < b.size()) {
    ssize_t n = write(fd, b.data() + off, b.size() - off);
    if (n > 0) off += (size_t)n;
    else if (n < 0 && errno == EINTR) continue;
    else if (n < 0 && errno == EAGAIN) { struct pollfd q = {fd, POLLOUT, 0}; poll(&q, 1, 100); }
    else return;
  }
}

struct Pipe {
  int r = -1, w = -1;
};
// one_page_pipe: a pipe of 4096 bytes (F_SETPIPE_SZ), both ends blocking.
inline Pipe one_page_pipe() {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) abort();
  fcntl(p[1], F_SETPIPE_SZ, 4096);
  return {p[0], p[1]};
}
// fill: writes '~' to fd until it takes no more (a second, non-blocking
// description where the kernel gives one, else O_NONBLOCK for the while);
// returns the filler written.
inline std::string fill(int fd) {
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  int nb = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  bool own = nb >= 0;
  int flags = 0;
  if (!own) { nb = fd; flags = fcntl(fd, F_GETFL); fcntl(fd, F_SETFL, flags | O_NONBLOCK); }
  std::string filler;
  std::string chunk(64, '~');
  for (;;) {
    ssize_t n = write(nb, chunk.data(), chunk.size());
    if (n > 0) { filler.append((size_t)n, '~'); continue; }
    if (n < 0 && errno == EINTR) continue;
    // a pty may take more after a moment (its buffer is pushed to the reader's side)
    struct pollfd q = {nb, POLLOUT, 0};
    if (poll(&q, 1, 20) > 0 && (q.revents & POLLOUT)) {
      n = write(nb, chunk.data(), chunk.size());
      if (n > 0) { filler.append((size_t)n, '~'); continue; }
    }
    break;
  }
  if (own) close(nb); else fcntl(fd, F_SETFL, flags);
  return filler;
}

// read_file: the whole file at path into *got (false: it cannot be opened).
inline bool read_file(const char *path, std::string *got) {
  FILE *in = fopen(path, "rb");
  if (!in) return false;
  char b[65536];
  size_t n;
  while ((n = fread(b, 1, sizeof b, in)) > 0) got->append(b, n);
  fclose(in);
  return true;
}

// queued: bytes waiting in a pipe or socket (FIONREAD).
inline int queued(int fd) {
  int n = -1;
  ioctl(fd, FIONREAD, &n);
  return n;
}

// Reader: reads fd (the other end of the child's fd 2) into got.
struct Reader {
  int fd;
  std::string got;
  bool eof = false;
  // avail reads what is there within ms (0: what is there now).
  void avail(int ms = 0) {
    auto t0 = Clock::now();
    char buf[65536];
    while (!eof) {
      int left = ms - (int)ms_since(t0);
      struct pollfd q = {fd, POLLIN, 0};
      int p = poll(&q, 1, left < 0 ? 0 : left);
      if (p < 0 && errno == EINTR) continue;
      if (p <= 0) return;
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) { got.append(buf, (size_t)n); continue; }
      if (n < 0 && errno == EINTR) continue;
      eof = true;  // 0, or EIO: a pty whose other side is closed
    }
  }
  // upto reads until got holds n bytes or ms pass.
  void upto(size_t n, int ms) {
    auto t0 = Clock::now();
    while (!eof && got.size() < n && ms_since(t0) < ms) {
      char buf[65536];
      size_t want = std::min(sizeof buf, n - got.size());
      struct pollfd q = {fd, POLLIN, 0};
      if (poll(&q, 1, 50) <= 0) continue;
      ssize_t r = read(fd, buf, want);
      if (r > 0) got.append(buf, (size_t)r);
      else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) eof = true;
    }
  }
  // to_eof reads until every writer is gone, or ms pass (false then).
  bool to_eof(int ms) {
    auto t0 = Clock::now();
    while (!eof) {
      if (ms_since(t0) > ms) return false;
      avail(50);
    }
    return true;
  }
  // slowly: to EOF, chunk bytes at a time, pausing pause_us between reads
  // and stop_ms every stop_every bytes (0: never).
  bool slowly(size_t chunk, int pause_us, size_t stop_every, int stop_ms, int ms) {
    auto t0 = Clock::now();
    size_t since = 0;
    std::vector<char> buf(chunk);
    while (!eof) {
      if (ms_since(t0) > ms) return false;
      struct pollfd q = {fd, POLLIN, 0};
      if (poll(&q, 1, 50) <= 0) continue;
      ssize_t r = read(fd, buf.data(), chunk);
      if (r > 0) { got.append(buf.data(), (size_t)r); since += (size_t)r; }
      else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) { eof = true; break; }
      if (stop_every && since >= stop_every) { since = 0; sleep_ms(stop_ms); }
      else if (pause_us) std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
    }
    return true;
  }
};

// ---------------------------------------------------------------- the child

// Ctl: one end of the control socket; messages are lines.
struct Ctl {
  int fd = -1;
  std::string buf;
  void say(const std::string &m) { write_all_fd(fd, m + "\n"); }
  // hear: the next message within ms ("" on timeout or EOF).
  std::string hear(int ms = 10000) {
    auto t0 = Clock::now();
    for (;;) {
      size_t e = buf.find('\n');
      if (e != std::string::npos) {
        std::string m = buf.substr(0, e);
        buf.erase(0, e + 1);
        return m;
      }
      int left = ms - (int)ms_since(t0);
      if (left <= 0) return "";
      struct pollfd q = {fd, POLLIN, 0};
      int p = poll(&q, 1, left);
      if (p < 0 && errno == EINTR) continue;
      if (p <= 0) return "";
      char b[4096];
      ssize_t n = read(fd, b, sizeof b);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return "";
      buf.append(b, (size_t)n);
    }
  }
};

// Body: the child's part; "" when it went as the test wants, else why not.
using Body = std::function<std::string(Ctl &)>;

struct Child {
  pid_t pid = -1;
  Ctl ctl;
  int status = 0;
  bool reaped = false;
  std::string failure;  // a FAIL message the child sent

  // expect: the next message is m (a FAIL message or silence fails).
  testing::AssertionResult expect(const std::string &m, int ms = 10000) {
    std::string got = ctl.hear(ms);
    if (got == m) return testing::AssertionSuccess();
    if (got.rfind("FAIL ", 0) == 0) failure = got;
    return testing::AssertionFailure() << "the child said " << (got.empty() ? "nothing (stuck, or gone)" : "\"" + got + "\"") << " within " << ms << " ms, want \"" << m << "\"";
  }
  // value: the next message, "<key> <number>", as the number (-1: not that).
  long value(const std::string &key, int ms = 10000) {
    std::string got = ctl.hear(ms);
    if (got.rfind(key + " ", 0) != 0) { failure = got; return -1; }
    return atol(got.c_str() + key.size() + 1);
  }
  // wait: the child's exit within ms; killed (SIGKILL) and false after.
  bool wait(int ms = 10000) {
    if (reaped) return true;
    auto t0 = Clock::now();
    for (;;) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) { reaped = true; return true; }
      if (ms_since(t0) > ms) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        reaped = true;
        return false;
      }
      sleep_ms(2);
    }
  }
  // ok: the child exited 0, within ms; else what it said or how it ended.
  testing::AssertionResult ok(int ms = 10000) {
    if (!wait(ms)) return testing::AssertionFailure() << "the child did not end within " << ms << " ms (killed): a write blocked for good?";
    std::string more;
    for (std::string m; !(m = ctl.hear(0)).empty();) more += " [" + m + "]";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return testing::AssertionSuccess();
    auto r = testing::AssertionFailure();
    if (WIFSIGNALED(status)) r << "the child was killed by signal " << WTERMSIG(status);
    else r << "the child exited " << WEXITSTATUS(status);
    return r << (failure.empty() ? "" : ": " + failure) << more;
  }
  ~Child() {
    if (pid > 0 && !reaped) { kill(pid, SIGKILL); waitpid(pid, &status, 0); }
    if (ctl.fd >= 0) close(ctl.fd);
  }
};

struct Options {
  bool python_signals = false;  // Py_InitializeEx(1): CPython's SIGINT handler
  bool install = true;          // logjam::install(new logjam::Logjam())
};

// spawn forks a child: fd2 becomes its fd 2 (-1: left as is), close are
// closed in it, CPython starts (the main thread holds the GIL), the sink
// is installed and body runs; the child _exits 0 when body returns "",
// else sends "FAIL <why>" and exits 1.
inline void spawn(Child &c, int fd2, std::vector<int> close_fds, Body body, Options o = {}) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) abort();
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) abort();
  if (pid == 0) {
    close(sv[0]);  // the child stays in the test binary's process group: killing the group ends it too
    if (fd2 >= 0 && fd2 != 2) dup2(fd2, 2);
    for (int fd : close_fds) if (fd != 2) close(fd);
    if (fd2 > 2) close(fd2);
    Py_InitializeEx(o.python_signals ? 1 : 0);
    if (o.install) logjam::install(new logjam::Logjam());
    Ctl ctl{sv[1], ""};
    std::string why = body(ctl);
    if (!why.empty()) {
      ctl.say("FAIL " + why);
      _exit(1);
    }
    _exit(0);
  }
  close(sv[1]);
  c.pid = pid;
  c.ctl.fd = sv[0];
}

// call: one binding call around f (GIL held): enter, f, leave; leave's
// result.
inline bool call(const std::function<void()> &f) {
  logjam::enter();
  f();
  return logjam::leave();
}

inline void log_all(const std::string &tag, int from, int to, size_t size = 80, char level = 'I') {
  for (int i = from; i < to; i++) logjam::log(level, line(tag, i, size));
}

}  // namespace ht
