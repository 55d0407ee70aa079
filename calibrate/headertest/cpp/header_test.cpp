// header_test.cpp: logjam.hpp's rules, each played by the header itself
// against a real fd 2 (a pipe, a pty, /dev/null, a file, a socket) in a
// forked child with a live CPython; the parent is fd 2's reader and judges
// the exact bytes it got: every line once, whole, in order per thread. The
// rule each test pins is named as docs/SINK.md names it.
#include "harness.hpp"

#include <pty.h>
#include <sched.h>
#include <sys/mount.h>
#include <termios.h>

#include <atomic>
#include <climits>
#include <mutex>

// The test binary's malloc, calloc and realloc are glibc's, through a hook
// that can raise a signal inside an allocation while holding an arena lock
// of its own: a signal handler that allocates then waits for itself for
// ever, as on a glibc arena lock (non-recursive) a real crash inside malloc
// does. Fatal.FromASignalHandlerThatInterruptedMalloc uses it.
extern "C" void *__libc_malloc(size_t);
extern "C" void *__libc_calloc(size_t, size_t);
extern "C" void *__libc_realloc(void *, size_t);
namespace arena {
std::atomic<bool> held{false};
volatile sig_atomic_t raise_inside = 0;  // the next allocation raises this signal, the arena held
inline void enter() {
  while (held.exchange(true)) sched_yield();
  if (int sig = raise_inside) {
    raise_inside = 0;
    raise(sig);
  }
}
inline void leave() { held.store(false); }
// A fork while another thread allocates leaves the child's copy free, as
// glibc's own at-fork handlers do for its arenas.
const int at_fork = pthread_atfork([] { enter(); }, [] { leave(); }, [] { leave(); });
}  // namespace arena
extern "C" void *malloc(size_t n) {
  arena::enter();
  void *p = __libc_malloc(n);
  arena::leave();
  return p;
}
extern "C" void *calloc(size_t n, size_t m) {
  arena::enter();
  void *p = __libc_calloc(n, m);
  arena::leave();
  return p;
}
extern "C" void *realloc(void *q, size_t n) {
  arena::enter();
  void *p = __libc_realloc(q, n);
  arena::leave();
  return p;
}

namespace {

using ht::Child;
using ht::Clock;
using ht::Ctl;
using ht::line;
using ht::lines;

// CtlObserver reports the fatal path's flush on the control socket.
struct CtlObserver : logjam::Observer {
  Ctl *ctl;
  std::atomic<int> flushes{0};
  explicit CtlObserver(Ctl *c) : ctl(c) {}
  void fatal_flush(const std::vector<std::string> &written, size_t left) override {
    ctl->say("fatal_flush " + std::to_string(written.size()) + " " + std::to_string(left));
  }
  void flush(size_t n, const std::string &, const char *) override {
    if (n > 0) flushes++;
  }
};

struct Socket {
  int parent = -1, child = -1;
};
// small_socket: a UNIX stream socket pair; the child's end sends into a
// small buffer.
Socket small_socket(int sz = 4096) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) abort();
  setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  return {sv[0], sv[1]};
}

struct Pty {
  int master = -1, slave = -1;
};
// raw_pty: a pty in raw mode (no "\n" to "\r\n": the bytes read are the
// bytes written).
Pty raw_pty() {
  Pty p;
  p.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p.master < 0 || grantpt(p.master) != 0 || unlockpt(p.master) != 0) abort();
  p.slave = open(ptsname(p.master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p.slave < 0) abort();
  struct termios t;
  tcgetattr(p.slave, &t);
  cfmakeraw(&t);
  tcsetattr(p.slave, TCSANOW, &t);
  return p;
}

// ---------------------------------------------------------------- direct, room check

// Direct while the original; room check ("a writer that finds room never
// waits"): in a call, each line is on fd 2 before the call goes on.
TEST(Direct, InACallEachLineIsOnFd2BeforeTheCallGoesOn) {
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    long best = LONG_MAX;
    logjam::enter();
    for (int i = 0; i < 5; i++) {
      auto t0 = Clock::now();
      logjam::log('I', line("m", i));
      best = std::min(best, ht::us_since(t0));
      ctl.say("logged");
      if (ctl.hear() != "next") return "no word from the parent";
    }
    if (!logjam::leave()) return "leave() raised";
    ctl.say("best " + std::to_string(best));
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  for (int i = 0; i < 5; i++) {
    ASSERT_TRUE(c.expect("logged"));
    r.upto(lines("m", 0, i + 1).size(), 2000);
    ASSERT_TRUE(ht::same_bytes(r.got, lines("m", 0, i + 1))) << "line " << i << " was not on fd 2 when log() returned";
    c.ctl.say("next");
  }
  long best = c.value("best");
  EXPECT_GE(best, 0);
  EXPECT_LT(best, 50000) << "the quickest of 5 lines into a pipe with room took " << best << " us: a writer that finds room waited";
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, lines("m", 0, 5)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// Direct: only if the stdio lock is free. Another thread holds it (a
// writer of its own, or a flush blocked on fd 2): the line is kept at
// once, never waited for, and written at the call's exit.
TEST(Direct, AHeldStdioLockKeepsTheLineWithoutWaitingForIt) {
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    std::atomic<bool> held{false}, release{false};
    std::thread holder([&] {
      flockfile(stderr);
      held = true;
      for (int i = 0; i < 100 && !release.load(); i++) ht::sleep_ms(10);  // at most 1 s
      funlockfile(stderr);
    });
    while (!held.load()) ht::sleep_ms(1);
    logjam::enter();
    auto t0 = Clock::now();
    logjam::log('I', line("l", 0));
    long us = ht::us_since(t0);
    release = true;
    holder.join();
    ctl.say("took " + std::to_string(us));
    if (ctl.hear() != "leave") return "no word";
    if (!logjam::leave()) return "leave() raised";
    return "";
  });
  close(p.w);
  long us = c.value("took");
  EXPECT_GE(us, 0);
  EXPECT_LT(us, 500000L) << "the line waited " << us << " us for the stdio lock another thread held";
  ht::Reader r{p.r};
  r.avail(100);
  EXPECT_EQ(r.got, "") << "the line went to fd 2 during the call";
  c.ctl.say("leave");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, line("l", 0)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// Room check's bound (kRoomWaitMs, 100 ms): fd 2 full and no one reading,
// a line in a call waits the bound, not less and not grossly more, and is
// then kept (not on fd 2 until the call's exit).
void room_bound(int fd2, int reader, const std::string &filler, const char *what) {
  Child c;
  ht::spawn(c, fd2, {reader}, [](Ctl &ctl) -> std::string {
    logjam::enter();
    auto t0 = Clock::now();
    logjam::log('I', line("w", 0));
    ctl.say("waited " + std::to_string(ht::us_since(t0)));
    if (ctl.hear() != "leave") return "no word from the parent";
    if (!logjam::leave()) return "leave() raised";
    return "";
  });
  close(fd2);
  long us = c.value("waited");
  EXPECT_GE(us, logjam::kRoomWaitMs * 1000L) << what << ": the line was kept after " << us << " us, before the room check's bound";
  EXPECT_GE(us, 100000L) << what << ": the room check's bound is 100 ms (docs/SINK.md); it waited " << us << " us";
  EXPECT_LT(us, 1000000L) << what << ": the room check waited " << us << " us, far past its 100 ms bound";
  ht::Reader r{reader};
  r.upto(filler.size(), 5000);
  r.avail(100);
  EXPECT_TRUE(ht::same_bytes(r.got, filler)) << what << ": the line must be kept during the call, not written";
  c.ctl.say("leave");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + line("w", 0))) << what;
  EXPECT_TRUE(c.ok());
  close(reader);
}

TEST(RoomCheck, AFullPipeNoOneReadsIsWaitedForTheBoundThenTheLineIsKept) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  room_bound(p.w, p.r, filler, "a full pipe");
}

TEST(RoomCheck, AFullSocketNoOneReadsIsWaitedForTheBoundThenTheLineIsKept) {
  Socket s = small_socket();
  std::string filler = ht::fill(s.child);
  room_bound(s.child, s.parent, filler, "a full socket");
}

TEST(RoomCheck, AFullPtyNoOneReadsIsWaitedForTheBoundThenTheLineIsKept) {
  Pty t = raw_pty();
  std::string filler = ht::fill(t.slave);
  room_bound(t.slave, t.master, filler, "a full pty");
}

// ---------------------------------------------------------------- stall, catch-up

// Catch-up after a stall: the kept lines go first (in order), then the
// line at hand, and the call is direct again; all within the call.
TEST(Stall, AfterAStallTheKeptLinesGoBeforeTheLineAtHand) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    logjam::enter();
    ht::log_all("s", 0, 10);
    ctl.say("kept");
    if (ctl.hear() != "go") return "no go";
    ht::log_all("s", 10, 12);
    ctl.say("logged");
    if (ctl.hear() != "leave") return "no leave";
    if (!logjam::leave()) return "leave() raised";
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(c.expect("kept"));
  r.upto(filler.size(), 5000);
  r.avail(50);
  ASSERT_TRUE(ht::same_bytes(r.got, filler)) << "lines logged while fd 2 was full reached it";
  c.ctl.say("go");
  ASSERT_TRUE(c.expect("logged"));
  r.upto(filler.size() + 12 * 80, 3000);
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("s", 0, 12))) << "within the call, after room came back";
  c.ctl.say("leave");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("s", 0, 12)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// Catch-up after a stall that stops part-way (fd 2 full again): the rest,
// the line at hand included, kept in order and written at the exit.
TEST(Stall, ACatchUpThatStopsPartWayKeepsTheRestInOrder) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  ASSERT_EQ(filler.size(), 4096u);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    logjam::enter();
    ht::log_all("s", 0, 60);  // 4800 bytes, more than a page
    ctl.say("kept");
    if (ctl.hear() != "go") return "no go";
    ht::log_all("s", 60, 61);
    ctl.say("logged");
    if (ctl.hear() != "leave") return "no leave";
    if (!logjam::leave()) return "leave() raised";
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(c.expect("kept"));
  r.upto(filler.size(), 5000);
  ASSERT_EQ(r.got, filler);
  c.ctl.say("go");
  ASSERT_TRUE(c.expect("logged"));
  // 51 lines of 80 bytes fill the page (4080 bytes); the 52nd does not fit.
  EXPECT_EQ(ht::queued(p.r), 51 * 80) << "the catch-up did not stop where the page was full";
  c.ctl.say("leave");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("s", 0, 61)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// A pipe that fills and a reader that stops and catches up, many times,
// within one call: every line once, in order.
TEST(Stall, APipeThatFillsWithAReaderThatStopsAndCatchesUp) {
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &) -> std::string {
    if (!ht::call([] { for (int i = 0; i < 600; i++) { logjam::log('I', line("s", i, 50 + i % 90)); if (i % 50 == 0) ht::sleep_ms(20); } }))
      return "leave() raised";
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(r.slowly(4096, 0, 2048, 150, 20000));
  std::string want;
  for (int i = 0; i < 600; i++) want += line("s", i, 50 + i % 90);
  EXPECT_TRUE(ht::same_bytes(r.got, want));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// ---------------------------------------------------------------- keep cap, note, sys.stderr replaced

// Keep and the left-out note: with sys.stderr replaced a call keeps its
// lines; past 64 KiB the oldest go until 32 KiB is left, counted exactly;
// the flush is one sys.stderr.write, the note first. 1000 lines of 100
// bytes: the cap cuts at lines 655, 982 (327 kept after each cut, the
// 656th... counted), 658 lines (65800 bytes) left out, lines 658 to 999
// kept (342 lines, 34200 bytes).
TEST(Keep, TheCapLeavesOutTheOldestAndTheNoteCountsThemExactly) {
  ht::Pipe p = ht::one_page_pipe();
  char path[] = "/tmp/logjam-headertest-XXXXXX";
  int f = mkstemp(path);
  ASSERT_GE(f, 0);
  close(f);
  Child c;
  ht::spawn(c, p.w, {p.r}, [&path](Ctl &) -> std::string {
    std::string py = "import sys\nsys.stderr = open(" + std::string("'") + path + "', 'w', encoding='utf-8')\n";
    if (PyRun_SimpleString(py.c_str()) != 0) return "could not replace sys.stderr";
    if (!ht::call([] { ht::log_all("k", 0, 1000, 100); })) return "leave() raised";
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(r.to_eof(10000));
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(r.got, "") << "with sys.stderr replaced, fd 2 got lines";
  std::string got;
  ASSERT_TRUE(ht::read_file(path, &got));
  unlink(path);
  EXPECT_TRUE(ht::same_bytes(got, "executorch: 658 lines (65800 bytes) left out\n" + lines("k", 658, 1000, 100)));
  close(p.r);
}

// Flush at the outermost exit with sys.stderr replaced: invalid UTF-8 is
// escaped (backslashreplace), never a UnicodeDecodeError, never dropped.
TEST(Keep, AReplacedStderrGetsInvalidUTF8Escaped) {
  ht::Pipe p = ht::one_page_pipe();
  char path[] = "/tmp/logjam-headertest-XXXXXX";
  int f = mkstemp(path);
  ASSERT_GE(f, 0);
  close(f);
  Child c;
  ht::spawn(c, p.w, {p.r}, [&path](Ctl &) -> std::string {
    std::string py = "import sys\nsys.stderr = open('" + std::string(path) + "', 'w', encoding='utf-8')\n";
    if (PyRun_SimpleString(py.c_str()) != 0) return "could not replace sys.stderr";
    if (!ht::call([] { logjam::log('I', "bad \xff\xfe byte\n"); logjam::log('I', "ok\n"); })) return "leave() raised";
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(r.to_eof(10000));
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(r.got, "");
  FILE *in = fopen(path, "rb");
  ASSERT_NE(in, nullptr);
  char b[4096];
  size_t n = fread(b, 1, sizeof b, in);
  fclose(in);
  unlink(path);
  EXPECT_EQ(std::string(b, n), "bad \\xff\\xfe byte\nok\n");
  close(p.r);
}

// Flush with sys.stderr replaced: a sys.stderr.write that raises sends the
// kept lines to fd 2 (each once), and its exception is raised after the
// call as itself.
TEST(Keep, AReplacedStderrThatRaisesSendsTheLinesToFd2AndItsExceptionIsRaised) {
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &) -> std::string {
    const char *py =
        "import sys\n"
        "class Broken:\n"
        "    def write(self, s): raise OSError(5, 'the capture broke')\n"
        "    def flush(self): pass\n"
        "sys.stderr = Broken()\n";
    if (PyRun_SimpleString(py) != 0) return "could not replace sys.stderr";
    bool ok = ht::call([] { ht::log_all("b", 0, 5); });
    if (ok) return "leave() raised nothing";
    if (!PyErr_ExceptionMatches(PyExc_OSError)) return "leave() raised something else than the write's OSError";
    PyErr_Clear();
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, lines("b", 0, 5)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// Daemon rule (Linux, Python before 3.13.8): a daemon thread's call on a
// full fd 2 never waits for it at its exit: its lines are counted in the
// note (never dropped silently), written by the next non-daemon flush.
PyObject *daemon_body(PyObject *, PyObject *) {
  logjam::enter();
  ht::log_all("d", 0, 5);
  if (!logjam::leave()) return NULL;
  Py_RETURN_NONE;
}
TEST(Daemon, ADaemonsLinesWithNoRoomAreCountedInTheNote) {
  if (PY_VERSION_HEX >= 0x030D08F0) GTEST_SKIP() << "the daemon rule holds before Python 3.13.8 only";
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    static PyMethodDef def = {"dbody", daemon_body, METH_NOARGS, nullptr};
    PyObject *f = PyCFunction_New(&def, nullptr);
    PyDict_SetItemString(PyModule_GetDict(PyImport_AddModule("__main__")), "dbody", f);
    Py_DECREF(f);
    if (PyRun_SimpleString("import threading\nd = threading.Thread(target=dbody, daemon=True)\nd.start()\nd.join()\n") != 0)
      return "the daemon thread failed";
    ctl.say("joined");
    if (ctl.hear() != "flush") return "no word";
    if (!logjam::flush_outside()) return "flush_outside() raised";
    return "";
  });
  close(p.w);
  ASSERT_TRUE(c.expect("joined"));
  ht::Reader r{p.r};
  r.upto(filler.size(), 5000);
  r.avail(100);
  EXPECT_TRUE(ht::same_bytes(r.got, filler)) << "the daemon's lines reached fd 2 after it found no room";
  c.ctl.say("flush");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + "executorch: 5 lines (400 bytes) left out\n"));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// ---------------------------------------------------------------- a pty

// Direct while the original, on a terminal whose reader is slow: fd 2
// (full at the start) takes part of a line (a short write); the rest
// follows, never the head again. Steady: the rest goes within the bound.
// The pty tests log 600 lines of 97 bytes, under the keep cap: a stall
// (a reader that stops, or one a loaded machine keeps off the CPU) keeps
// lines, never leaves any out.
TEST(Pty, ASlowReaderGetsEveryLineOnceAndWhole) {
  Pty t = raw_pty();
  std::string filler = ht::fill(t.slave);
  Child c;
  ht::spawn(c, t.slave, {t.master}, [](Ctl &) -> std::string {
    if (!ht::call([] { ht::log_all("p", 0, 600, 97); })) return "leave() raised";
    return "";
  });
  close(t.slave);
  ht::Reader r{t.master};
  ASSERT_TRUE(r.slowly(61, 100, 0, 0, 30000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("p", 0, 600, 97)));
  EXPECT_TRUE(c.ok());
  close(t.master);
}

// The same with a reader that stops for longer than the bound in the
// middle of a line: the part written is finished (blocking) before any
// other line, and lines kept meanwhile catch up in order.
TEST(Pty, AReaderThatStopsMidLineGetsEveryLineOnceAndWhole) {
  Pty t = raw_pty();
  std::string filler = ht::fill(t.slave);
  Child c;
  ht::spawn(c, t.slave, {t.master}, [](Ctl &) -> std::string {
    if (!ht::call([] { ht::log_all("p", 0, 600, 97); })) return "leave() raised";
    return "";
  });
  close(t.slave);
  ht::Reader r{t.master};
  ASSERT_TRUE(r.slowly(61, 100, 4000, 150, 30000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("p", 0, 600, 97)));
  EXPECT_TRUE(c.ok());
  close(t.master);
}

// Without /proc (no twin for a tty): fd 2 is written only once poll reports
// room, at most PIPE_BUF bytes at a time; a slow reader still gets every
// line once and whole. /proc is hidden by an empty tmpfs over it in the
// child's own mount namespace (skipped where the child may not make one).
TEST(Pty, WithoutProcASlowReaderGetsEveryLineOnceAndWhole) {
  Pty t = raw_pty();
  std::string filler = ht::fill(t.slave);
  Child c;
  ht::spawn(c, t.slave, {t.master}, [](Ctl &ctl) -> std::string {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", "/proc", "tmpfs", 0, nullptr) != 0) {
      ctl.say(std::string("skip: no mount namespace here: ") + strerror(errno));
      return "";
    }
    int probe = open("/proc/self/fd/2", O_WRONLY);
    if (probe >= 0) return "/proc/self/fd/2 still opens";
    ctl.say("no /proc");
    if (!ht::call([] { ht::log_all("p", 0, 600, 97); })) return "leave() raised";
    return "";
  });
  close(t.slave);
  std::string said = c.ctl.hear();
  if (said.rfind("skip", 0) == 0) {
    EXPECT_TRUE(c.ok());
    close(t.master);
    GTEST_SKIP() << said;
  }
  ASSERT_EQ(said, "no /proc") << c.ok();
  ht::Reader r{t.master};
  ASSERT_TRUE(r.slowly(61, 100, 4000, 150, 30000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("p", 0, 600, 97)));
  EXPECT_TRUE(c.ok());
  close(t.master);
}

// ---------------------------------------------------------------- /dev/null, a file, a socket

// /dev/null always takes a line: nothing kept, nothing blocks.
TEST(Kinds, DevNullTakesEveryLineAtOnce) {
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(null, 0);
  Child c;
  ht::spawn(c, null, {}, [](Ctl &ctl) -> std::string {
    CtlObserver o(&ctl);
    logjam::set_observer(&o);
    auto t0 = Clock::now();
    for (int k = 0; k < 100; k++)
      if (!ht::call([k] { ht::log_all("n", k * 100, k * 100 + 100); })) return "leave() raised";
    ht::log_all("o", 0, 100);
    if (!logjam::flush_outside()) return "flush_outside() raised";
    long ms = ht::ms_since(t0);
    if (o.flushes.load() != 0) return std::to_string(o.flushes.load()) + " flushes of kept lines: a line was kept on /dev/null";
    if (ms > 5000) return "10100 lines to /dev/null took " + std::to_string(ms) + " ms";
    return "";
  });
  close(null);
  EXPECT_TRUE(c.ok(15000));
}

// A file always has room ("no room" from a file is not believed): every
// line, in calls, outside them with and without the GIL, at once, in
// order.
TEST(Kinds, ARegularFileGetsEveryLineInOrderNoneKept) {
  char path[] = "/tmp/logjam-headertest-XXXXXX";
  int f = mkstemp(path);
  ASSERT_GE(f, 0);
  Child c;
  ht::spawn(c, f, {}, [](Ctl &ctl) -> std::string {
    CtlObserver o(&ctl);
    logjam::set_observer(&o);
    for (int k = 0; k < 3; k++)
      if (!ht::call([k] { ht::log_all("f", k * 500, k * 500 + 500, 60 + k * 40); })) return "leave() raised";
    ht::log_all("g", 0, 50);                                // outside a call, GIL held
    std::thread([] { ht::log_all("h", 0, 50); }).join();  // outside a call, no GIL
    if (!logjam::flush_outside()) return "flush_outside() raised";
    if (o.flushes.load() != 0) return "a line was kept on a file";
    return "";
  });
  close(f);
  EXPECT_TRUE(c.ok());
  std::string got;
  ASSERT_TRUE(ht::read_file(path, &got));
  unlink(path);
  std::string want;
  for (int k = 0; k < 3; k++) want += lines("f", k * 500, k * 500 + 500, 60 + k * 40);
  want += lines("g", 0, 50) + lines("h", 0, 50);
  EXPECT_TRUE(ht::same_bytes(got, want));
}

// A socket (journald's stream) that fills, then its reader catches up:
// kept lines catch up in the call, in order.
TEST(Kinds, ASocketThatFillsThenCatchesUp) {
  Socket s = small_socket(65536);  // room for the 40 lines once drained
  std::string filler = ht::fill(s.child);
  Child c;
  ht::spawn(c, s.child, {s.parent}, [](Ctl &ctl) -> std::string {
    logjam::enter();
    ht::log_all("k", 0, 20);
    ctl.say("kept");
    if (ctl.hear() != "go") return "no go";
    ht::log_all("k", 20, 40);
    ctl.say("logged");
    if (ctl.hear() != "leave") return "no leave";
    if (!logjam::leave()) return "leave() raised";
    return "";
  });
  close(s.child);
  ht::Reader r{s.parent};
  ASSERT_TRUE(c.expect("kept"));
  r.upto(filler.size(), 5000);
  r.avail(100);
  ASSERT_TRUE(ht::same_bytes(r.got, filler)) << "lines logged while the socket was full reached it";
  c.ctl.say("go");
  ASSERT_TRUE(c.expect("logged"));
  r.upto(filler.size() + 40 * 80, 3000);
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("k", 0, 40))) << "within the call, after room came back";
  c.ctl.say("leave");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("k", 0, 40)));
  EXPECT_TRUE(c.ok());
  close(s.parent);
}

// ---------------------------------------------------------------- fd 2 moved

// The header decides how to write to fd 2 by what fd 2 was, and checks at
// each line, with one system call, that it still is (fd2::now,
// refused_now): a tty is still the twin's tty (TIOCGDEV), a file still
// seekable (lseek). A capture may dup2 a pipe onto fd 2 at any moment, in a
// call too (another thread, while the call lets the GIL go).

// fd 2 moved off a tty inside a call: the next lines go to the new fd 2,
// not through the tty's twin, and so do the next call's.
TEST(Moved, OffATtyInACallTheNextLinesGoToTheNewFd2) {
  Pty t = raw_pty();
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  int pw = p.w;
  ht::spawn(c, t.slave, {t.master, p.r}, [pw](Ctl &) -> std::string {
    logjam::enter();
    ht::log_all("t", 0, 3);  // the tty, through its twin
    dup2(pw, 2);
    close(pw);
    ht::log_all("p", 0, 3);  // the pipe
    if (!logjam::leave()) return "leave() raised";
    if (!ht::call([] { ht::log_all("q", 0, 2); })) return "leave() raised";  // a call's first line: fd2::now
    return "";
  });
  close(t.slave);
  close(p.w);
  ht::Reader rp{p.r}, rt{t.master};
  ASSERT_TRUE(rp.to_eof(5000));
  EXPECT_TRUE(c.ok());
  ASSERT_TRUE(rt.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(rt.got, lines("t", 0, 3))) << "the tty";
  EXPECT_TRUE(ht::same_bytes(rp.got, lines("p", 0, 3) + lines("q", 0, 2))) << "the pipe moved onto fd 2";
  close(p.r);
  close(t.master);
}

// fd 2 moved off a file (written plainly, after a refused RWF_NOWAIT where
// the file system refuses it, as ext4 does) onto a full pipe between two
// calls: the next call's first line
// waits the room check's bound and is kept (a plain write would wait for
// the reader, GIL held), and so is its next line; the exit flush writes
// them once the reader reads.
TEST(Moved, OffAFileOntoAFullPipeALineWaitsTheBoundThenIsKept) {
  char path[] = "/tmp/logjam-headertest-XXXXXX";
  int f = mkstemp(path);
  ASSERT_GE(f, 0);
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  int pw = p.w;
  ht::spawn(c, f, {p.r}, [pw](Ctl &ctl) -> std::string {
    if (!ht::call([] { ht::log_all("f", 0, 3); })) return "leave() raised";
    std::string filler = ht::fill(pw);
    dup2(pw, 2);
    close(pw);
    ctl.say("filled " + std::to_string(filler.size()));
    logjam::enter();
    ht::log_all("p", 0, 2);
    ctl.say("logged");
    return logjam::leave() ? "" : "leave() raised";  // the flush waits for the reader, the GIL let go
  });
  close(f);
  close(p.w);
  long filled = c.value("filled");
  ASSERT_GT(filled, 0) << c.ok();
  ASSERT_TRUE(c.expect("logged", 5000)) << "a line blocked on the full pipe moved onto fd 2";
  ht::Reader r{p.r};
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(ht::same_bytes(r.got, std::string((size_t)filled, '~') + lines("p", 0, 2)));
  std::string got;
  ASSERT_TRUE(ht::read_file(path, &got));
  unlink(path);
  EXPECT_TRUE(ht::same_bytes(got, lines("f", 0, 3))) << "the file";
  close(p.r);
}

// A write the kernel refuses for good (ENOSPC: /dev/full; EPIPE: a pipe
// whose reader is gone, SIGPIPE ignored as Python ignores it) gives that
// line up, as fwrite would: no hang, nothing kept, the call goes on.
TEST(Kinds, ARefusedWriteGivesTheLineUpAndTheCallGoesOn) {
  for (const char *what : {"/dev/full", "a pipe whose reader is gone"}) {
    int fd;
    if (std::string(what) == "/dev/full") {
      fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    } else {
      ht::Pipe p = ht::one_page_pipe();
      close(p.r);
      fd = p.w;
    }
    ASSERT_GE(fd, 0) << what;
    Child c;
    ht::spawn(c, fd, {}, [](Ctl &ctl) -> std::string {
      signal(SIGPIPE, SIG_IGN);
      CtlObserver o(&ctl);
      logjam::set_observer(&o);
      auto t0 = Clock::now();
      if (!ht::call([] { ht::log_all("r", 0, 50); })) return "leave() raised";
      ht::log_all("o", 0, 5);
      if (!logjam::flush_outside()) return "flush_outside() raised";
      if (o.flushes.load() != 0) return "a refused line was kept";
      if (ht::ms_since(t0) > 2000) return "55 refused lines took " + std::to_string(ht::ms_since(t0)) + " ms";
      return "";
    });
    close(fd);
    EXPECT_TRUE(c.ok()) << what;
  }
}

// SIGINT between lines: a real SIGINT (CPython's handler) ends the exit
// flush's blocked write with EINTR: its handler runs once, between lines,
// and its KeyboardInterrupt is raised after the call; a second SIGINT stays
// pending for the eval loop; every line is written, once.
TEST(Signals, ASIGINTDuringTheExitFlushIsRaisedAfterTheCallAndLosesNothing) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::Options o;
  o.python_signals = true;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    logjam::enter();
    ht::log_all("i", 0, 20);
    ctl.say("leaving");
    bool ok = logjam::leave();
    bool ki = !ok && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt);
    PyErr_Clear();
    bool pending = PyErr_CheckSignals() < 0 && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt);
    PyErr_Clear();
    if (!ki) return ok ? "leave() raised nothing" : "leave() raised something else than KeyboardInterrupt";
    if (!pending) return "the second SIGINT was not left pending for the eval loop";
    return "";
  }, o);
  close(p.w);
  ASSERT_TRUE(c.expect("leaving"));
  ht::sleep_ms(300);  // the flush is blocked on the full pipe (no one reads)
  kill(c.pid, SIGINT);
  ht::sleep_ms(100);
  kill(c.pid, SIGINT);
  ht::sleep_ms(100);
  ht::Reader r{p.r};
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("i", 0, 20)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// ---------------------------------------------------------------- EINTR, EAGAIN

std::atomic<int> alarms{0};
void on_alarm(int) { alarms++; }

// A real signal (SIGALRM every ms, handler installed without SA_RESTART)
// ends blocked writes and polls with EINTR: the room check polls again for
// what is left, the exit flush and the fatal path's blocking writes write
// again; nothing lost, nothing twice.
TEST(Signals, EINTRFromARealSignalLosesNothing) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    struct sigaction sa = {};
    sa.sa_handler = on_alarm;
    sa.sa_flags = 0;  // no SA_RESTART: a blocked write ends with EINTR
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, nullptr);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, nullptr);
    logjam::enter();
    auto t0 = Clock::now();
    ht::log_all("e", 0, 300);
    long waited = ht::ms_since(t0);
    ctl.say("kept");
    if (!logjam::leave()) return "leave() raised";
    ht::log_all("e", 300, 310);  // outside a call (GIL held)
    if (!logjam::flush_outside()) return "flush_outside() raised";
    logjam::log('F', line("F", 0));
    struct itimerval off = {};
    setitimer(ITIMER_REAL, &off, nullptr);
    if (waited < 100) return "the room check gave up after " + std::to_string(waited) + " ms under EINTR";
    ctl.say("alarms " + std::to_string(alarms.load()));
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(c.expect("kept"));
  ASSERT_TRUE(r.slowly(80, 300, 0, 0, 20000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("e", 0, 310) + line("F", 0)));
  EXPECT_GT(c.value("alarms"), 50);
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// Someone set O_NONBLOCK on fd 2's description: the blocking writes (the
// exit flush, the fatal line) meet EAGAIN and wait for room with poll;
// nothing lost, nothing twice.
TEST(NonBlocking, EAGAINOnAnONonblockPipeWaitsForRoom) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  std::string fatal = line("F", 0, 20000);
  Child c;
  ht::spawn(c, p.w, {p.r}, [&fatal](Ctl &ctl) -> std::string {
    fcntl(2, F_SETFL, fcntl(2, F_GETFL) | O_NONBLOCK);
    logjam::enter();
    ht::log_all("a", 0, 100);
    ctl.say("kept");
    if (!logjam::leave()) return "leave() raised";
    logjam::log('F', fatal);
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(c.expect("kept"));
  ASSERT_TRUE(r.slowly(512, 300, 0, 0, 20000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("a", 0, 100) + fatal));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// ---------------------------------------------------------------- the fatal path

// Fatal path: the lines kept process-wide (outside a call), then the call's
// kept lines, then the fatal line; then the runtime aborts.
TEST(Fatal, KeptLinesGoFirstThenTheFatalLine) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    CtlObserver o(&ctl);
    logjam::set_observer(&o);
    ht::log_all("o", 0, 2);  // outside a call, GIL held: kept process-wide
    logjam::enter();
    ht::log_all("c", 0, 10);
    ctl.say("kept");
    if (ctl.hear() != "go") return "no go";
    logjam::log('F', line("F", 0));
    ctl.say("aborting");
    abort();
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(c.expect("kept"));
  r.upto(filler.size(), 5000);
  r.avail(50);
  ASSERT_TRUE(ht::same_bytes(r.got, filler));
  c.ctl.say("go");
  EXPECT_TRUE(c.expect("fatal_flush 12 0"));  // the 2 outside lines and the call's 10 written, 0 left
  EXPECT_TRUE(c.expect("aborting"));
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("o", 0, 2) + lines("c", 0, 10) + line("F", 0)));
  ASSERT_TRUE(c.wait());
  EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT);
  close(p.r);
}

// Fatal path with no room: each kept line is tried within the bound and
// none is written half; the fatal line still goes (blocking).
TEST(Fatal, WithNoRoomTheFatalLineStillGoesAndNoKeptLineHalf) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    CtlObserver o(&ctl);
    logjam::set_observer(&o);
    logjam::enter();
    ht::log_all("c", 0, 10);
    auto t0 = Clock::now();
    logjam::log('F', line("F", 0));
    ctl.say("took " + std::to_string(ht::ms_since(t0)));
    abort();
  });
  close(p.w);
  EXPECT_TRUE(c.expect("fatal_flush 0 10"));
  ht::Reader r{p.r};
  ht::sleep_ms(200);
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + line("F", 0)));
  long took = c.value("took");
  EXPECT_GE(took, 100) << "the fatal path did not wait the bound for its kept lines";
  ASSERT_TRUE(c.wait());
  EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT);
  close(p.r);
}

// ---------------------------------------------------------------- lines outside a call

// Outside a call: with the GIL held, never a wait (the line kept at once);
// without it, up to the bound. A later line never overtakes the kept
// ones, even once fd 2 has room; flush_outside writes them in order.
TEST(Outside, NoWaitWithTheGILAndALaterLineNeverOvertakesTheKept) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    auto t0 = Clock::now();
    logjam::log('I', line("o", 0));  // GIL held
    long held = ht::us_since(t0);
    long unheld = 0;
    std::thread([&] {
      auto t1 = Clock::now();
      logjam::log('I', line("o", 1));  // no GIL: kept too (behind o0), with no wait
      unheld = ht::us_since(t1);
    }).join();
    ctl.say("held " + std::to_string(held));
    ctl.say("unheld " + std::to_string(unheld));
    if (ctl.hear() != "drained") return "no word";
    logjam::log('I', line("o", 2));  // room now, but o0 and o1 are kept: behind them
    ctl.say("logged");
    if (ctl.hear() != "flush") return "no word";
    if (!logjam::flush_outside()) return "flush_outside() raised";
    return "";
  });
  close(p.w);
  long held = c.value("held"), unheld = c.value("unheld");
  EXPECT_GE(held, 0);
  // One try only (the lines after it are kept behind it): a bound just
  // under the room check's, so a loaded machine does not fail it.
  EXPECT_LT(held, 95000) << "a line outside a call with the GIL held waited " << held << " us on a full fd 2";
  EXPECT_GE(unheld, 0);
  ht::Reader r{p.r};
  r.upto(filler.size(), 5000);
  c.ctl.say("drained");
  ASSERT_TRUE(c.expect("logged"));
  r.avail(100);
  EXPECT_TRUE(ht::same_bytes(r.got, filler)) << "a line outside a call overtook the lines kept before it";
  c.ctl.say("flush");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("o", 0, 3)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// Flush at the outermost exit: the lines kept process-wide (this thread's
// too, logged before the call) go first, then the call's own, under one
// hold of the stdio lock.
TEST(ExitFlush, TheProcessWideLinesGoBeforeTheCallsOwn) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    ht::log_all("o", 0, 3);  // outside a call, GIL held, fd 2 full: kept process-wide
    logjam::enter();
    ht::log_all("c", 0, 3);  // the room check finds none: kept by the call
    ctl.say("kept");
    if (ctl.hear() != "leave") return "no word";
    if (!logjam::leave()) return "leave() raised";
    return "";
  });
  close(p.w);
  ASSERT_TRUE(c.expect("kept"));
  ht::Reader r{p.r};
  r.upto(filler.size(), 5000);
  c.ctl.say("leave");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("o", 0, 3) + lines("c", 0, 3)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// Outside a call without the GIL, fd 2 full: the line waits the room
// check's bound (not less, not grossly more), then is kept.
TEST(Outside, WithoutTheGILALineWaitsTheBoundThenIsKept) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    long us = 0;
    std::thread([&] {
      auto t0 = Clock::now();
      logjam::log('I', line("t", 0));
      us = ht::us_since(t0);
    }).join();
    ctl.say("waited " + std::to_string(us));
    if (ctl.hear() != "flush") return "no word";
    if (!logjam::flush_outside()) return "flush_outside() raised";
    return "";
  });
  close(p.w);
  long us = c.value("waited");
  EXPECT_GE(us, 100000L);
  EXPECT_LT(us, 1000000L);
  ht::Reader r{p.r};
  r.upto(filler.size(), 5000);
  r.avail(100);
  EXPECT_TRUE(ht::same_bytes(r.got, filler));
  c.ctl.say("flush");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + line("t", 0)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// ---------------------------------------------------------------- threads

size_t thread_size(int t, int i) { return (size_t)(40 + (t * 37 + i * 13) % 160); }
std::atomic<bool> q_ok{true};
PyObject *q_body(PyObject *, PyObject *) {
  for (int k = 0; k < 10; k++) {
    logjam::enter();
    for (int i = k * 30; i < k * 30 + 30; i++) logjam::log('I', line("q", i, thread_size(5, i)));
    if (!logjam::leave()) { q_ok = false; return NULL; }
    Py_BEGIN_ALLOW_THREADS
    ht::sleep_ms(2);
    Py_END_ALLOW_THREADS
  }
  Py_RETURN_NONE;
}

// Every line of every thread once, whole, in order per thread: a call that
// lets the GIL go while it logs, a Python thread making short calls, and
// four native threads logging outside any call, while fd 2's reader stops
// and catches up. The lines kept process-wide stay under the keep cap (4 x
// 100 lines of at most 200 bytes): none is left out.
TEST(Threads, EveryLineOncePerThreadInOrder) {
  ht::Pipe p = ht::one_page_pipe();
  auto size = thread_size;
  Child c;
  ht::spawn(c, p.w, {p.r}, [&size](Ctl &) -> std::string {
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; t++)
      ts.emplace_back([t, &size] {
        for (int i = 0; i < 100; i++) {
          logjam::log('I', line("t" + std::to_string(t), i, size(t, i)));
          if (i % 20 == 0) ht::sleep_ms(10);
        }
      });
    // q: a Python thread (threading.Thread, not a daemon) making 10 short
    // calls, the GIL let go between them.
    static PyMethodDef qdef = {"qbody", q_body, METH_NOARGS, nullptr};
    PyObject *qf = PyCFunction_New(&qdef, nullptr);
    PyDict_SetItemString(PyModule_GetDict(PyImport_AddModule("__main__")), "qbody", qf);
    Py_DECREF(qf);
    if (PyRun_SimpleString("import threading\nq = threading.Thread(target=qbody, name='q')\nq.start()\n") != 0) return "could not start q";
    logjam::enter();
    PyThreadState *st = PyEval_SaveThread();
    for (int i = 0; i < 300; i++) {
      logjam::log('I', line("m", i, size(4, i)));
      if (i % 60 == 0) ht::sleep_ms(10);
    }
    for (auto &t : ts) t.join();
    PyEval_RestoreThread(st);
    if (!logjam::leave()) return "leave() raised";
    if (PyRun_SimpleString("q.join()\n") != 0) return "q.join() raised";
    if (!logjam::flush_outside()) return "flush_outside() raised";
    if (!q_ok.load()) return "q's leave() raised";
    return "";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(r.slowly(4096, 0, 8192, 150, 30000));
  std::map<std::string, std::vector<std::string>> want;
  for (int t = 0; t < 4; t++)
    for (int i = 0; i < 100; i++) want["t" + std::to_string(t)].push_back(line("t" + std::to_string(t), i, size(t, i)));
  for (int i = 0; i < 300; i++) want["m"].push_back(line("m", i, size(4, i)));
  for (int i = 0; i < 300; i++) want["q"].push_back(line("q", i, size(5, i)));
  EXPECT_TRUE(ht::per_thread(r.got, want));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// ---------------------------------------------------------------- the exit flush and the GIL

// Flush at the outermost exit: with sys.stderr the original the kept lines
// go to fd 2 with the GIL released. fd 2's reader here is a forwarder that
// needs the GIL for each read (as a Python thread reading a capture pipe
// does): a flush that kept the GIL while fd 2 is full never ends. One kept
// line (the smallest flush).
TEST(ExitFlush, TheGILIsLetGoWhileTheFlushWaitsOnAFullFd2) {
  ht::Pipe out = ht::one_page_pipe();  // the forwarder's output, read here
  Child c;
  ht::spawn(c, -1, {out.r}, [&out](Ctl &ctl) -> std::string {
    ht::Pipe p = ht::one_page_pipe();
    dup2(p.w, 2);
    close(p.w);
    std::string filler = ht::fill(2);
    int fwd_out = out.w;
    std::atomic<bool> done{false};
    std::thread fwd([&p, &done, fwd_out] {
      char b[512];
      for (;;) {
        struct pollfd q = {p.r, POLLIN, 0};
        if (poll(&q, 1, 100) <= 0) {
          if (done.load()) break;  // the flush is over and fd 2 is empty
          continue;
        }
        PyGILState_STATE g = PyGILState_Ensure();
        ssize_t n = read(p.r, b, sizeof b);
        PyGILState_Release(g);
        if (n <= 0) break;
        ht::write_all_fd(fwd_out, std::string(b, (size_t)n));
      }
      close(fwd_out);
    });
    logjam::enter();
    logjam::log('I', line("x", 0));  // fd 2 full, the forwarder waits for the GIL: kept
    ctl.say("kept");
    bool ok = logjam::leave();
    ctl.say("left");
    done = true;
    PyThreadState *st = PyEval_SaveThread();
    fwd.join();
    PyEval_RestoreThread(st);
    return ok ? "" : "leave() raised";
  });
  close(out.w);
  ASSERT_TRUE(c.expect("kept"));
  ASSERT_TRUE(c.expect("left", 5000)) << "the exit flush waited on a full fd 2 with the GIL held: the forwarder that drains fd 2 needs it";
  ht::Reader r{out.r};
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, std::string(4096, '~') + line("x", 0)));
  EXPECT_TRUE(c.ok(5000));
  close(out.r);
}

}  // namespace

// ---------------------------------------------------------------- fork

namespace logjam {
struct LogjamTestAccess {
  using Held = Logjam::Held;  // the sink's lock, held by the calling thread
};
}  // namespace logjam

namespace {

// grandchild runs body in a fork of the child (its fd 2 is fd2 when >= 0)
// and reports its status within ms: "exit N", "signal N", or "stuck" (it
// was killed at the deadline).
std::string grandchild(int fd2, const std::function<void()> &body, int ms = 2000) {
  pid_t g = fork();
  if (g == 0) {
    if (fd2 >= 0) dup2(fd2, 2);
    body();
    _exit(0);
  }
  auto t0 = Clock::now();
  int st = 0;
  while (waitpid(g, &st, WNOHANG) == 0) {
    if (ht::ms_since(t0) > ms) {
      kill(g, SIGKILL);
      waitpid(g, &st, 0);
      return "stuck";
    }
    ht::sleep_ms(2);
  }
  return WIFSIGNALED(st) ? "signal " + std::to_string(WTERMSIG(st)) : "exit " + std::to_string(WEXITSTATUS(st));
}

// A fork while another thread holds the sink's own lock (a line being kept
// process-wide): the child's first line that must be kept takes that lock,
// which no thread of the child would ever let go. The sink takes it across
// the fork (pthread_atfork), so the child logs. The holder lets go once
// the fork has begun: a prepare handler of the test's, registered after the
// sink's, runs before it (prepare handlers run in reverse order), so the
// sink's prepare waits for the holder, never a timer.
std::atomic<bool> fork_begun{false};
void on_fork_begun() { fork_begun = true; }

TEST(Fork, AForkWhileAnotherThreadHoldsTheSinksLockLeavesTheChildFree) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, -1, {p.r}, [&](Ctl &ctl) -> std::string {
    auto *lj = dynamic_cast<logjam::Logjam *>(logjam::sink());
    if (!lj) return "no Logjam sink";
    pthread_atfork(on_fork_begun, nullptr, nullptr);
    std::atomic<bool> held{false};
    std::thread holder([&] {
      logjam::LogjamTestAccess::Held g(*lj);
      held = true;
      while (!fork_begun) ht::sleep_ms(1);
    });
    while (!held) ht::sleep_ms(1);
    std::string st = grandchild(p.w, [] {
      logjam::log('I', line("g", 0));  // outside a call, fd 2 full: kept, under the lock
    });
    holder.join();
    ctl.say("grandchild " + st);
    return "";
  });
  close(p.w);
  std::string got = c.ctl.hear(10000);
  EXPECT_EQ(got, "grandchild exit 0") << "a fork while another thread held the sink's lock: the child hung on it";
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// Lines the parent kept process-wide before a fork are the parent's to
// write: the child's copy is dropped, so a flush in the child does not
// write them a second time.
TEST(Fork, TheChildDoesNotWriteWhatTheParentKept) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  ht::Pipe q = ht::one_page_pipe();  // the child's own fd 2, empty
  Child c;
  ht::spawn(c, p.w, {p.r, q.r}, [&](Ctl &ctl) -> std::string {
    std::thread([] { logjam::log('I', line("kept", 0)); }).join();  // no room, no GIL: kept after the bound
    std::string st = grandchild(q.w, [] {
      if (!logjam::flush_outside()) _exit(3);
      logjam::log('I', line("child", 0));
    });
    ctl.say("grandchild " + st);
    return "";
  });
  close(p.w);
  close(q.w);
  EXPECT_EQ(c.ctl.hear(10000), "grandchild exit 0");
  ht::Reader r{q.r};
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, line("child", 0))) << "the child wrote the parent's kept line";
  EXPECT_TRUE(c.ok());
  close(p.r);
  close(q.r);
}

}  // namespace

namespace {

// A thread's line kept outside a call (fd 2 full, the GIL held: no wait),
// then, once fd 2 has room again, its line in a call: they reach fd 2 in
// the order logged. The call keeps its line while the thread's own
// outside line waits in the process-wide keep, and its outermost exit
// writes the process-wide lines first (the model's
// TestALineKeptOutsideACallGoesBeforeTheThreadsNextCall).
TEST(Outside, ALineKeptOutsideACallGoesBeforeTheThreadsNextCall) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    logjam::log('I', line("o", 0));  // outside a call, GIL held, no room: kept
    ctl.say("kept");
    if (ctl.hear() != "room") return "no word";
    if (!ht::call([] { logjam::log('I', line("c", 0)); })) return "the call raised";
    return "";
  });
  close(p.w);
  ASSERT_TRUE(c.expect("kept"));
  ht::Reader r{p.r};
  r.upto(filler.size(), 5000);
  c.ctl.say("room");
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + line("o", 0) + line("c", 0)));
  EXPECT_TRUE(c.ok());
  close(p.r);
}

// A crash handler of the runtime logs its Fatal line from a signal handler
// that interrupted the thread while it held the sink's lock (keeping a
// line): the fatal path never waits for a lock its own thread holds, so
// the Fatal line reaches fd 2 and the process aborts, never hangs.
void fatal_from_handler(int) {
  logjam::log('F', line("fatal", 0));
  abort();  // the runtime aborts after its Fatal line
}

TEST(Fatal, FromASignalHandlerOnTheThreadThatHoldsTheSinksLock) {
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &) -> std::string {
    auto *lj = dynamic_cast<logjam::Logjam *>(logjam::sink());
    if (!lj) return "no Logjam sink";
    struct sigaction sa {};
    sa.sa_handler = fatal_from_handler;
    sigaction(SIGUSR1, &sa, nullptr);
    logjam::LogjamTestAccess::Held g(*lj);
    raise(SIGUSR1);  // the handler runs here, on this thread, the lock held
    return "the fatal line returned";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(c.wait(3000)) << "the fatal path waited for a lock its own thread held: hung";
  EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT) << "status " << c.status;
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, line("fatal", 0)));
  close(p.r);
}

// A crash inside malloc (the thread holds an arena lock): the runtime's
// crash handler hands its Fatal line to logjam::fatal from the signal
// handler. The fatal path allocates nothing, so it never waits for the
// arena lock its own thread holds: the process-wide lines, the call's kept
// lines and the Fatal line reach fd 2, then the abort.
char crash_line[256];
size_t crash_line_n = 0;
void crash_handler(int) {
  logjam::fatal(std::string_view(crash_line, crash_line_n));  // async-signal-safe: no std::string here
  abort();
}
// set_crash_line: the Fatal line crash_handler logs, made before the crash
// (the handler makes nothing).
void set_crash_line(const std::string &fatal) {
  ASSERT_LT(fatal.size(), sizeof crash_line);
  memcpy(crash_line, fatal.data(), fatal.size());
  crash_line_n = fatal.size();
}
// handle: h is sig's handler (in the child).
void handle(int sig, void (*h)(int)) {
  struct sigaction sa {};
  sa.sa_handler = h;
  sigaction(sig, &sa, nullptr);
}

TEST(Fatal, FromASignalHandlerThatInterruptedMalloc) {
  ht::Pipe p = ht::one_page_pipe();
  std::string filler = ht::fill(p.w);
  set_crash_line(line("F", 0));
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    handle(SIGSEGV, crash_handler);
    ht::log_all("o", 0, 2);  // outside a call, GIL held: kept process-wide
    logjam::enter();
    ht::log_all("c", 0, 10);  // kept: no room
    ctl.say("kept");
    if (ctl.hear() != "go") return "no go";
    logjam::set_observer(nullptr);  // a binding's sink: no observer
    arena::raise_inside = SIGSEGV;
    void *q = malloc(64);  // the crash: inside malloc, the arena held
    free(q);
    return "the crash handler returned";
  });
  close(p.w);
  ht::Reader r{p.r};
  ASSERT_TRUE(c.expect("kept"));
  r.upto(filler.size(), 5000);
  r.avail(50);
  ASSERT_TRUE(ht::same_bytes(r.got, filler));
  c.ctl.say("go");
  ASSERT_TRUE(c.wait(3000)) << "the fatal path allocated in the signal handler: it waits for the arena its thread holds";
  EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT) << "status " << c.status;
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, filler + lines("o", 0, 2) + lines("c", 0, 10) + line("F", 0)));
  close(p.r);
}

}  // namespace

// ---------------------------------------------------------------- a forwarder's pipe

namespace {

// capture_fd2: what ipykernel and wurlitzer do, in the child: fd 2 becomes
// a new one-page pipe, a copy of the old fd 2 is kept open (the forwarder's
// saved copy); returns the pipe's read end, which this process holds.
int capture_fd2() {
  ht::Pipe f = ht::one_page_pipe();
  if (dup(2) < 0) abort();  // the saved copy of the old fd 2
  dup2(f.w, 2);
  close(f.w);
  return f.r;
}

// expect_abort_with: the parent's side of a child that logs a Fatal line
// on its capture and aborts: it said "aborting", fd 2's reader got exactly
// want, and SIGABRT ended it.
void expect_abort_with(Child &c, ht::Pipe &p, const std::string &want) {
  close(p.w);
  ht::Reader r{p.r};
  EXPECT_TRUE(c.expect("aborting"));
  ASSERT_TRUE(r.to_eof(5000));
  EXPECT_TRUE(ht::same_bytes(r.got, want));
  ASSERT_TRUE(c.wait());
  EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT);
  close(p.r);
}

}  // namespace

// Row F10's rule: a crash handler runs from a signal handler that
// interrupted the thread keeping a line process-wide, the sink's lock held.
// The fatal path does not wait for that lock (its own thread's) and reads
// the keep as it is (its change was done): the kept lines, then the Fatal
// line. The model pins it in row F10.
struct CrashAtTheSecondKeep : logjam::Observer {
  int kept = 0;
  void kept_outside() override {
    if (++kept == 2) raise(SIGSEGV);  // the signal arrives here, the sink's lock held
  }
};

TEST(Fatal, FromASignalHandlerWhileKeepingALineTheKeptLinesGoFirst) {
  set_crash_line(line("F", 0));
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    handle(SIGSEGV, crash_handler);
    PyRun_SimpleString("import sys, io\nsys.stderr = io.StringIO()\n");  // captured: outside lines are kept
    static CrashAtTheSecondKeep o;
    logjam::set_observer(&o);
    ctl.say("aborting");
    ht::log_all("o", 0, 2);  // a destructor: outside any call, GIL held
    return "the crash handler returned";
  });
  expect_abort_with(c, p, lines("o", 0, 2) + line("F", 0));
}

// A Fatal line on an in-process forwarder's pipe goes, with what the pipe
// holds and the call's lines, to the descriptor still open on what fd 2 was
// at install (the forwarder's saved copy): the pipe dies with the process.
// The model pins the same rule in TestAFatalLineOnAForwardersPipeGoesTo
// TheOutlivingCopy.
TEST(Fatal, OnAForwardersPipeGoesToTheOutlivingCopy) {
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    int rd = capture_fd2();  // no forwarder thread reads: its reads wait for the GIL this thread holds
    (void)rd;
    std::string pre = line("p", 0);
    if (write(2, pre.data(), pre.size()) != (ssize_t)pre.size()) return "no room for the first line";
    logjam::enter();
    ht::log_all("c", 0, 3);
    logjam::log('F', line("F", 0));
    ctl.say("aborting");
    abort();
  });
  expect_abort_with(c, p, line("p", 0) + lines("c", 0, 3) + line("F", 0));
}

// A call that holds the GIL keeps its lines while fd 2 is a forwarder's
// pipe: a forwarder that reads as bytes arrive holds what it read while it
// waits for the GIL, and that dies with the process. Here it reads at once
// and then waits for ever for a lock this thread holds (the GIL's part).
TEST(Fatal, OnAForwardersPipeTheCallKeepsWhatTheForwarderWouldHold) {
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    int rd = capture_fd2();
    static std::mutex gil;
    gil.lock();
    std::thread([rd] {
      char buf[1024];
      while (read(rd, buf, sizeof buf) > 0) {
        std::lock_guard<std::mutex> g(gil);  // never: the fatal thread holds it
      }
    }).detach();
    logjam::enter();
    ht::log_all("c", 0, 3);
    for (int q = 1; q > 0; std::this_thread::yield()) {  // the forwarder has taken what the pipe holds, if anything
      if (ioctl(rd, FIONREAD, &q) != 0) return "FIONREAD";
    }
    logjam::log('F', line("F", 0));
    ctl.say("aborting");
    abort();
  });
  expect_abort_with(c, p, lines("c", 0, 3) + line("F", 0));
}

// Installed under a capture (a notebook's kernel captured fd 2 before the
// module was imported), the sink takes the descriptor sys.stderr names as
// _original_stdstream_copy, as ipykernel's OutStream does, for what fd 2
// was: the Fatal line and its context reach the parent through it. The
// model pins it in TestASinkInstalledUnderIPyKernelsCaptureFindsItsSavedCopy.
TEST(Fatal, InstalledUnderIPyKernelsCaptureTheOutStreamNamesTheOutlivingCopy) {
  ht::Pipe p = ht::one_page_pipe();
  Child c;
  ht::Options o;
  o.install = false;
  ht::spawn(c, p.w, {p.r}, [](Ctl &ctl) -> std::string {
    int saved = dup(2);  // the kernel's copy of the old fd 2
    int rd = capture_fd2();
    (void)rd;
    PyRun_SimpleString("import sys\nclass OutStream:\n    def write(self, s): return len(s)\n    def flush(self): pass\n");
    PyObject *main = PyImport_AddModule("__main__");
    PyObject *cls = PyObject_GetAttrString(main, "OutStream");
    PyObject *out = PyObject_CallNoArgs(cls);
    PyObject *fd = PyLong_FromLong(saved);
    PyObject_SetAttrString(out, "_original_stdstream_copy", fd);
    PySys_SetObject("stderr", out);
    Py_DECREF(fd);
    Py_DECREF(cls);
    logjam::install(new logjam::Logjam());  // the module imported now
    logjam::enter();
    ht::log_all("c", 0, 3);
    logjam::log('F', line("F", 0));
    ctl.say("aborting");
    abort();
  }, o);
  expect_abort_with(c, p, lines("c", 0, 3) + line("F", 0));
}
