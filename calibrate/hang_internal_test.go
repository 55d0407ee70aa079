package calibrate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"logjam/harness/watchdog"
	"logjam/telemetry"
	"logjam/verdict"
)

// The hang watch on real interpreters: what it must prove early, and what
// it must never call a hang however it looks for a moment. Each program
// runs python3 with the extension (its announcement: the GIL's place, the
// lines written) under the watchdog, as Run does, with a 20 s deadline.

var hangExt struct {
	once     sync.Once
	in       Interpreter
	dir, why string
}

// extInterp is python3 with the extension built, or skips the test.
func extInterp(t *testing.T) (Interpreter, string) {
	t.Helper()
	hangExt.once.Do(func() {
		in, err := Default()
		if err != nil {
			hangExt.why = "no python3: " + err.Error()
			return
		}
		if in.Missing != "" {
			hangExt.why = "python3: " + in.Missing
			return
		}
		if _, err := Compiler(); err != nil {
			hangExt.why = "no C++ compiler: " + err.Error()
			return
		}
		dir, err := Build(in)
		if err != nil {
			hangExt.why = "building the extension: " + err.Error()
			return
		}
		hangExt.in, hangExt.dir = in, dir
	})
	if hangExt.why != "" {
		t.Skip(hangExt.why + ": the watch is tried on a real interpreter with the extension")
	}
	return hangExt.in, hangExt.dir
}

// watched is what the watch made of one program.
type watched struct {
	seen, cycle string
	proven      bool
	res         *watchdog.Result
}

// watchProgram runs src after the extension's setup (its announcement)
// and a "start" event, under a hangWatch armed at "start"; onEvent, if
// set, is the parent's answer to an event (before the watch counts it).
func watchProgram(t *testing.T, src string, onEvent func(pid int, ev telemetry.Event)) watched {
	t.Helper()
	in, dir := extInterp(t)
	pre := "import logjamext as ext, os, sys, json, threading, time\n" +
		"ext.setup('fd2', int(os.environ.get('WATCHDOG_TELEMETRY_FD', '3')))\n" +
		"ext.emit(json.dumps({'ev': 'start'}))\n"
	cmd := exec.Command(in.Path, "-c", pre+src+"\nprint('done', flush=True)\n")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
	h := &hangWatch{cmd: cmd, after: 20 * time.Second, settle: hangSettle}
	defer h.stop()
	res, err := watchdog.Run(context.Background(), cmd, watchdog.Config{
		Deadline: 30 * time.Second,
		OnEvent: func(ev telemetry.Event) {
			if onEvent != nil {
				onEvent(cmd.Process.Pid, ev)
			}
			h.event(ev)
			if ev.Ev == "start" {
				h.arm()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.stop()
	cycle, proven := h.confirmed()
	return watched{seen: h.observed(), cycle: cycle, proven: proven, res: res}
}

// A real deadlock (the main thread waits for a lock it holds, nothing else
// can move) is proven from its wait state, long before the deadline, and
// named.
func TestARealDeadlockIsProvenFromItsWaitState(t *testing.T) {
	t.Parallel()
	w := watchProgram(t, "l = threading.Lock()\nl.acquire()\nl.acquire()\n", nil)
	if !w.proven {
		t.Fatalf("a deadlock was not proven from its wait state before its deadline (seen: %q)", w.seen)
	}
	if !strings.Contains(w.cycle, "waits for a lock or a condition") {
		t.Fatalf("the proven state does not name the wait: %q", w.cycle)
	}
}

// A thread that waits for the GIL while its holder waits for a semaphore
// only the process can post (a C call that blocks without letting the GIL
// go) is stuck too, and the GIL's holder is named: read from the GIL's own
// state where the extension placed it (3.11 on), or as the one thread
// that is not waiting for it.
func TestAGILWaiterBehindABlockedHolderIsProvenAndTheHolderNamed(t *testing.T) {
	t.Parallel()
	src := "import ctypes\n" +
		"def spin():\n    while True:\n        pass\nt = threading.Thread(target=spin, name='T', daemon=True)\nt.start()\n" +
		"sem = ctypes.create_string_buffer(64)\nlib = ctypes.PyDLL(None)\nlib.sem_init(sem, 0, 0)\nlib.sem_wait(sem)\n"
	w := watchProgram(t, src, nil)
	if !w.proven {
		t.Fatalf("a GIL waiter behind a blocked holder was not proven before its deadline (seen: %q)", w.seen)
	}
	main := fmt.Sprintf("python3[%d]", w.res.Pid) // the main thread's id is the process's
	if !strings.Contains(w.cycle, "waits for the GIL, held by "+main) || !strings.Contains(w.cycle, main+" waits for a lock or a condition") ||
		!strings.Contains(w.cycle, "holding the GIL") {
		t.Fatalf("the proven state does not name the GIL's waiter and holder: %q", w.cycle)
	}
}

// The extension's own lock is named, with the thread that holds it: two
// native threads of D1's backend, each waiting for what the other holds
// (the backend's lock L and the GIL).
func TestABackendsLockIsNamedWithItsHolder(t *testing.T) {
	t.Parallel()
	in, dir := extInterp(t)
	row, _ := RowNamed("D1")
	o, err := Run(context.Background(), in, dir, row, "pystderr", "", Buffered, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`B\[\d+\] waits for the backend's lock L, held by A\[\d+\]`).MatchString(o.Cycle) {
		t.Fatalf("D1 under pystderr: the real cycle does not name L and its holder: %q (reason: %s)", o.Cycle, o.Reason)
	}
	if !regexp.MustCompile(`A\[\d+\] waits for the GIL`).MatchString(o.Cycle) {
		t.Fatalf("D1 under pystderr: the real cycle does not name A's wait for the GIL: %q", o.Cycle)
	}
}

// A run that is slow but not stuck is never ended as a hang before its
// deadline, however stuck it looks at one moment: each of these ends by
// itself (a deadline of 20 s is never reached) and is never proven hung.
// Each planted eagerness turns one red: a single reading taken as proof
// (no switch counts), a mark the parent has not answered yet ignored (no
// line count), a timed wait taken for the GIL's (the GIL's state unread).
func TestASlowRunThatIsNotStuckIsNeverAHangEarly(t *testing.T) {
	t.Parallel()
	programs := map[string]struct {
		src     string
		onEvent func(pid int, ev telemetry.Event)
	}{
		// The reader drains the pipe the main thread writes, pausing in a
		// bounded wait: the writer waits for room only this process makes.
		"a reader that pauses": {src: "r, w = os.pipe()\n" +
			"def reader():\n    e = threading.Event()\n    while True:\n        e.wait(0.01)\n        b = os.read(r, 65536)\n        if not b:\n            return\n" +
			"t = threading.Thread(target=reader)\nt.start()\nfor _ in range(40):\n    os.write(w, b'x' * 65536)\nos.close(w)\nt.join()\n"},
		// Two threads hand a byte back and forth through pipes of their
		// own for a second, each read into the same buffer (so a wait
		// looks the same each time: the same system call and arguments).
		"a ping-pong through the process's own pipes": {src: "a, b = os.pipe()\nc, d = os.pipe()\n" +
			"def pong():\n    f, buf = open(a, 'rb', buffering=0), bytearray(1)\n    while f.readinto(buf) and buf[0] == 46:\n        os.write(d, b'.')\n" +
			"t = threading.Thread(target=pong)\nt.start()\nt0 = time.monotonic()\nf, buf = open(c, 'rb', buffering=0), bytearray(1)\n" +
			"while time.monotonic() - t0 < 1:\n    os.write(b, b'.')\n    f.readinto(buf)\nos.write(b, b'x')\nt.join()\n"},
		// The process waits for bytes only it could write, after asking the
		// parent for a SIGINT that ends the wait; the parent is slow to
		// answer (a loaded machine), so the mark is unread for a while.
		"a wait a slow parent's SIGINT ends": {src: "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\nr, w = os.pipe()\n" +
			"ext.emit(json.dumps({'ev': 'mark', 'name': 'sigint'}))\n" +
			"try:\n    os.read(r, 1)\nexcept KeyboardInterrupt:\n    pass\n",
			onEvent: func(pid int, ev telemetry.Event) {
				if m, ok := telemetry.As[telemetry.Mark](ev); ok && m.Name == telemetry.MarkSIGINT {
					time.Sleep(400 * time.Millisecond) // a slow answer: the fault under test
					_ = syscall.Kill(pid, syscall.SIGINT)
				}
			}},
		// The main thread waits for a lock only the process releases, and
		// the parent's signals, 20 ms apart, each end the wait for a
		// moment: the 25th's handler releases the lock. The wait looks the
		// same each time (the same futex, from the same place).
		"a wait the parent's signals end again and again": {src: "import signal\nl, n = threading.Lock(), [0]\n" +
			"def usr1(sig, frame):\n    n[0] += 1\n    if n[0] == 25:\n        l.release()\n" +
			"signal.signal(signal.SIGUSR1, usr1)\nl.acquire()\next.emit(json.dumps({'ev': 'mark', 'name': 'usr1'}))\nl.acquire()\n" +
			"signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])\n",
			onEvent: func(pid int, ev telemetry.Event) {
				if m, ok := telemetry.As[telemetry.Mark](ev); ok && m.Name == "usr1" {
					go func() {
						for syscall.Kill(pid, syscall.SIGUSR1) == nil {
							time.Sleep(20 * time.Millisecond) // the outside's pace: what is under test
						}
					}()
				}
			}},
		// Bounded waits, short and long, and waits for something outside.
		"a short bounded lock wait": {src: "l = threading.Lock()\nl.acquire()\nfor _ in range(100):\n    l.acquire(timeout=0.005)\n"},
		"a bounded lock wait":       {src: "l = threading.Lock()\nl.acquire()\nfor _ in range(10):\n    l.acquire(timeout=0.1)\n"},
		"a sleep":                   {src: "time.sleep(0.5)\n"},
		"a wait for a child":        {src: "import subprocess\nsubprocess.run(['sleep', '0.5'])\n"},
	}
	for name, p := range programs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := watchProgram(t, p.src, p.onEvent)
			if w.seen != "" || w.proven {
				t.Fatalf("%s: ended as a hang: %q", name, w.seen)
			}
			if w.res.Verdict != verdict.Completed {
				t.Fatalf("%s: did not end by itself: %s (%s)", name, w.res.Verdict, w.res.Reason)
			}
		})
	}
}
