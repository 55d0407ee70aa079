package sim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"logjam/telemetry"
)

// Platform is the OS whose kernel the model follows.
type Platform string

// The platforms.
const (
	Linux Platform = "linux"
	MacOS Platform = "macos"
)

// Platforms lists the accepted platforms.
var Platforms = []Platform{Linux, MacOS}

// ParsePlatform validates a platform name.
func ParsePlatform(s string) (Platform, error) {
	for _, p := range Platforms {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown platform %q (accepted: linux, macos)", s)
}

// Version is a CPython version as Py_Version encodes it (0x030D08F0 is
// 3.13.8 final).
type Version struct{ Major, Minor, Micro int }

// Hex is Py_Version.
func (v Version) Hex() uint32 {
	return uint32(v.Major)<<24 | uint32(v.Minor)<<16 | uint32(v.Micro)<<8 | 0xF0
}

func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Micro)
}

// DropsUndecodableMessage reports whether PyErr_SetString with invalid
// UTF-8 raises the exception with its message silently dropped
// (RuntimeError()) instead of a UnicodeDecodeError: before CPython checked
// that decode (gh-107915, in 3.11.5 and 3.12.0). Debian 12's 3.11.2 drops
// it, as 3.10 does; 3.11.7 raises (both calibrated).
func (v Version) DropsUndecodableMessage() bool {
	return v.Major == 3 && (v.Minor < 11 || (v.Minor == 11 && v.Micro < 5))
}

// Before reports whether v is older than o.
func (v Version) Before(o Version) bool { return v.Hex() < o.Hex() }

// ParseVersion accepts 3.10 to 3.15, with an optional micro version.
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(s, ".")
	bad := fmt.Errorf("unknown Python version %q (accepted: 3.10 to 3.15, as X.Y or X.Y.Z)", s)
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, bad
	}
	nums := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 99 {
			return Version{}, bad
		}
		nums[i] = n
	}
	v := Version{nums[0], nums[1], nums[2]}
	if v.Major != 3 || v.Minor < 10 || v.Minor > 15 {
		return Version{}, bad
	}
	return v, nil
}

// Interp is the modelled interpreter: GIL, threads, sys.stderr, signals,
// finalization.
type Interp struct {
	G        *Graph
	GIL      *Lock
	Tel      *telemetry.Writer
	Platform Platform
	Python   Version

	original Stream
	fd2      *FD2 // where the C library's last words go (__libc_fatal, Py_FatalError)
	stderr   atomic.Pointer[streamBox]
	Signals  *Signals

	mu        sync.Mutex
	threads   []*Thread
	memories  []*MemStream
	exitHooks []func(t *Thread)
	fin       finalization // finalize.go

	stdoutMu sync.Mutex
}

type streamBox struct{ s Stream }

func newInterp(tel *telemetry.Writer, p Platform, v Version) *Interp {
	g := newGraph(tel)
	in := &Interp{G: g, Tel: tel, Platform: p, Python: v}
	in.GIL = g.NewLock("the GIL")
	g.abandoned = func(t *Thread) bool { return t.Daemon && in.Finalizing() }
	return in
}

func (in *Interp) newThread(name string, daemon, main bool) *Thread {
	in.mu.Lock()
	defer in.mu.Unlock()
	t := &Thread{ID: len(in.threads) + 1, Name: name, Daemon: daemon, Main: main, in: in, done: make(chan struct{})}
	in.threads = append(in.threads, t)
	in.G.mu.Lock()
	in.G.threads = append(in.G.threads, t)
	in.G.mu.Unlock()
	return t
}

// Start runs fn on a new Python thread: it takes the GIL first, as a new
// thread must before running bytecode, and drops it when fn returns.
// A Python exception that escapes fn goes to threading.excepthook, which
// prints it to sys.stderr; the process goes on.
func (in *Interp) Start(name string, daemon bool, fn func(t *Thread) *PyErr) *Thread {
	t := in.newThread(name, daemon, false)
	go func() {
		defer in.endThread(t)
		defer in.threadTop(t) // a forced unwind ends the thread here
		t.AcquireGIL()
		if err := fn(t); err != nil {
			in.Tel.Emit(telemetry.Exception{Thread: t.Name, Type: err.Type, Text: err.Msg, Escaped: true})
			_ = in.Stderr().Write(t, fmt.Sprintf("Exception in thread %s:\n%s\n", t.Name, err.Traceback()))
		}
		t.ReleaseGIL()
	}()
	return t
}

// StartNative runs fn on a thread that does not hold the GIL (a native
// thread such as a forwarder's reader loop); fn takes it when it needs it.
func (in *Interp) StartNative(name string, daemon bool, fn func(t *Thread)) *Thread {
	t := in.newThread(name, daemon, false)
	in.G.mu.Lock()
	t.native = true
	in.G.mu.Unlock()
	go func() {
		defer in.endThread(t)
		defer in.threadTop(t) // a forced unwind ends the thread here
		fn(t)
	}()
	return t
}

func (in *Interp) endThread(t *Thread) {
	in.G.mu.Lock()
	t.ended = true
	in.G.changedLocked()
	in.G.mu.Unlock()
	close(t.done)
}

// Stderr is sys.stderr.
func (in *Interp) Stderr() Stream { return in.stderr.Load().s }

// SetStderr replaces sys.stderr (capsys, redirect_stderr, OutStream).
func (in *Interp) SetStderr(s Stream) {
	in.stderr.Store(&streamBox{s})
	if m, ok := s.(*MemStream); ok {
		in.mu.Lock()
		in.memories = append(in.memories, m)
		in.mu.Unlock()
	}
}

// Original is sys.__stderr__, the stream Python opened on fd 2.
func (in *Interp) Original() Stream { return in.original }

// StderrLock is the lock of sys.__stderr__'s BufferedWriter, or nil (python
// -u: a raw FileIO has none).
func (in *Interp) StderrLock() *Lock {
	if o, ok := in.original.(*OriginalStream); ok {
		return o.lock
	}
	return nil
}

// StderrReplaced reports whether sys.stderr is not sys.__stderr__ (the
// borrowed-pointer comparison the merged fix makes).
func (in *Interp) StderrReplaced() bool { return in.Stderr() != in.original }

// AtExit registers a hook run by Shutdown after non-daemon threads are
// joined and before finalization (atexit).
func (in *Interp) AtExit(fn func(t *Thread)) {
	in.mu.Lock()
	in.exitHooks = append(in.exitHooks, fn)
	in.mu.Unlock()
}

// Print is a Python-level print to stdout (never fd 2).
func (in *Interp) Print(s string) {
	in.stdoutMu.Lock()
	defer in.stdoutMu.Unlock()
	_, _ = os.Stdout.WriteString(s + "\n")
}

// Shutdown is the interpreter's exit: join the non-daemon threads that
// have not ended (stillRunning), run the atexit hooks, then finalize
// (daemon threads that ask for the GIL meet their fate and are never
// joined; sys.stderr is flushed; module objects are torn down; see
// finalize.go), then dump the in-memory streams to telemetry. It returns a
// *BrokenPromise, and finalizes nothing, when a state the scenario promised
// for the start of finalization does not hold.
func (in *Interp) Shutdown(main *Thread) error {
	in.mu.Lock()
	threads := append([]*Thread(nil), in.threads...)
	hooks := append([]func(t *Thread){}, in.exitHooks...)
	in.mu.Unlock()
	for _, t := range threads {
		if t != main && !t.Daemon && in.stillRunning(main, t) {
			main.Join(t)
		}
	}
	for _, h := range hooks {
		h(main)
	}
	err := in.finalize(main) // flush_std_files included
	in.DumpStreams()
	return err
}

// stillRunning reports whether threading._shutdown waits for t, a
// non-daemon thread: only if it has not ended. 3.13 and later drop a
// thread's handle from the shutdown list as the thread ends; before, the
// ended thread's lock is taken at once, without dropping the GIL. Joined
// again, a thread the script had joined let the GIL go for nothing, and
// daemon threads ran until main's goroutine queued for it again, as far as
// the scheduler let them (random search: pystderr, three threads joined by
// the script and four daemons, CRASH or OK as a daemon had begun its next
// call at finalization; docs/TRUST.md, "A join at shutdown"). It asks once
// t has ended or waits for something (Thread.SettledLocked; main parked
// meanwhile): a thread past its last release of the GIL is ending.
func (in *Interp) stillRunning(main, t *Thread) bool {
	running := false
	in.G.ParkUntil(main, func() bool {
		running = !t.ended
		return t.SettledLocked()
	})
	return running
}

// DumpStreams writes every in-memory stream to telemetry: what was written,
// and every text offered to it, with what it raised.
func (in *Interp) DumpStreams() {
	in.mu.Lock()
	mems := append([]*MemStream(nil), in.memories...)
	in.mu.Unlock()
	for _, m := range mems {
		in.Tel.Emit(m.report())
	}
}
