package sim

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"logjam/internal/pytext"
	"logjam/signals"
	"logjam/telemetry"
)

// Level is a runtime log level.
type Level byte

// The log levels of docs/FACTS.md.
const (
	Debug Level = 'D'
	Info  Level = 'I'
	Error Level = 'E'
	Fatal Level = 'F'
)

// Line is one formatted runtime log line.
type Line struct {
	Seq   int
	Level Level
	Bytes []byte
}

// Options choose the runtime a child simulates.
type Options struct {
	Platform Platform
	Python   Version
	// Buffering is how Python opened sys.stderr ("" is Buffered).
	Buffering Buffering
	// Policy builds the log sink (logjam/sim/policy.ByName).
	Policy PolicyMaker
	// ReaderAcks: the parent's reader of fd 2 answers the child's marks
	// MarkFD2Stall and MarkFD2Read with signals.StallAck (cells run by
	// harness/cell do; a child run by hand, or by a test that only reads
	// its telemetry, asks nothing).
	ReaderAcks bool
	// NoTelemetry leaves fd 3 alone (benchmarks in a process whose fd 3 is
	// not a telemetry pipe).
	NoTelemetry bool
	// Console, when set, is the terminal of a person running the child by
	// hand: cycles, Ctrl-C's meaning and the Ctrl-\ dump go there, and
	// Ctrl-\ ends the process after the dump (see Console).
	Console io.Writer
}

// Runtime is the native runtime hosted by the interpreter: logger, binding
// calls, backends, and the log sink policy.
type Runtime struct {
	In     *Interp
	G      *Graph
	Tel    *telemetry.Writer
	FD2    *FD2
	Stdio  *Lock // the C stdio lock on stderr
	Policy Policy
	Main   *Thread

	start   time.Time
	seq     atomic.Int64
	console *Console // nil unless run by hand on a terminal

	clockMu sync.Mutex
	lastUS  int64

	crash crash // a crash handler armed to interrupt a line (ArmCrash)
}

// New builds the runtime of one child process. The main thread holds the GIL.
func New(opts Options) (*Runtime, error) {
	start := time.Now()
	tel := telemetry.Discard(start)
	if !opts.NoTelemetry {
		tel = telemetry.Open(start)
	}
	in := newInterp(tel, opts.Platform, opts.Python)
	fd2, err := openFD2(in.G, tel, opts.ReaderAcks)
	if err != nil {
		return nil, err
	}
	in.fd2 = fd2
	in.original = newOriginalStream(in.G, fd2, opts.Buffering)
	in.SetStderr(in.original)
	in.Signals = newSignals(in, fd2.Wake)
	rt := &Runtime{In: in, G: in.G, Tel: tel, FD2: fd2, start: start}
	rt.Stdio = in.G.NewLock("the stdio lock of stderr")
	if opts.Policy == nil {
		return nil, UnknownPolicy("")
	}
	pol, err := opts.Policy(rt)
	if err != nil {
		return nil, err
	}
	// The C++ frames of each log path, so a forced unwind at exit meets
	// them as it would; routing is the policy's alone.
	rt.Policy = WithUnwindFrames(pol)
	rt.Main = in.newThread("MainThread", false, true)
	rt.Main.AcquireGIL()
	rt.console = newConsole(opts.Console)
	rt.console.attach(rt)
	rt.dumpOnSIGQUIT()
	// A sleeping goroutine keeps Go's "all goroutines are asleep" check
	// quiet: a deadlocked child must hang like the real one, not exit.
	go func() {
		for {
			time.Sleep(time.Hour)
		}
	}()
	tel.Emit(telemetry.Start{Pid: os.Getpid(), Policy: rt.Policy.Name(), Platform: string(opts.Platform),
		Python: opts.Python.String(), FD2: string(fd2.Kind), Sigint: string(in.Signals.Kind()),
		Buffering: string(in.original.(*OriginalStream).Buffering())})
	return rt, nil
}

// dumpOnSIGQUIT answers the watchdog's SIGQUIT with the lock table and every
// goroutine's stack, on telemetry (never fd 2), and keeps running: the
// watchdog decides when to kill. Run by hand on a terminal, the dump also
// goes to the console, and the process ends (Console).
func (rt *Runtime) dumpOnSIGQUIT() {
	signals.Bridge(syscall.SIGQUIT, func() {
		d := telemetry.Dump{Locks: rt.G.Snapshot(), Stacks: stacks()}
		rt.Tel.Emit(d)
		if rt.console != nil {
			rt.console.quit(rt, d)
		}
	})
}

// stamp is the log timestamp: elapsed time, strictly increasing per process
// so every line of a run is unique (the ledger matches lines by their bytes).
func (rt *Runtime) stamp() time.Duration {
	rt.clockMu.Lock()
	defer rt.clockMu.Unlock()
	us := time.Since(rt.start).Microseconds()
	if us <= rt.lastUS {
		us = rt.lastUS + 1
	}
	rt.lastUS = us
	return time.Duration(us) * time.Microsecond
}

// Log is ET_LOG: format (256-byte buffer, incomplete tail trimmed), record
// the line in the ledger, hand it to the sink; a fatal line aborts.
func (rt *Runtime) Log(t *Thread, lvl Level, file string, line int, format string, args ...any) {
	rt.LogBytes(t, lvl, file, line, []byte(fmt.Sprintf(format, args...)))
}

// LogBytes is Log with a message already formatted (raw bytes pass through).
func (rt *Runtime) LogBytes(t *Thread, lvl Level, file string, lineNo int, msg []byte) {
	msg = pytext.LogMessage(msg)
	l := Line{Seq: int(rt.seq.Add(1)), Level: lvl, Bytes: pytext.FormatLine(byte(lvl), rt.stamp(), file, lineNo, msg)}
	if lvl == Error && t.depth > 0 {
		t.errs = pytext.AppendRuntimeErrors(t.errs, append(msg[:len(msg):len(msg)], '\n'))
	}
	rt.Tel.Emit(telemetry.Line{Seq: l.Seq, Thread: t.Name, Daemon: t.Daemon, Level: string(lvl),
		InCall: t.depth > 0, Replaced: rt.In.StderrReplaced(), B: l.Bytes})
	rt.crash.logged(t)
	rt.SinkOf(t).Emit(t, l)
	rt.CrashPoint(t)
	if lvl == Fatal {
		rt.Abort("fatal log line")
	}
}

// Route records where the sink sent a line (the ledger's routing column).
func (rt *Runtime) Route(t *Thread, l Line, route, why string) {
	if !rt.Tel.Enabled() {
		return // no reader: no event to build (a line's hot path)
	}
	rt.Tel.Emit(telemetry.Route{Seq: l.Seq, Thread: t.Name, Route: route, Why: why})
}

// NativeError is a runtime Error returned from native code, with the
// message THROW_IF_ERROR formats.
type NativeError struct {
	Type string // RuntimeError, or IndexError for THROW_INDEX_IF_ERROR
	Msg  []byte // formatted, before the 127-byte cut
}

// Call is a binding call: it runs holding the GIL (the bindings never
// release it), with a scope whose outermost exit is where the sink flushes.
// It returns the Python exception the caller sees, if any.
func (rt *Runtime) Call(t *Thread, name string, body func() *NativeError) *PyErr {
	if !t.HoldsGIL() {
		panic("sim: binding call " + name + " without the GIL on " + t.Name)
	}
	t.depth++
	if t.depth == 1 {
		t.errs = nil
		rt.SinkOf(t).Enter(t)
	}
	var exc *PyErr
	if nerr := body(); nerr != nil {
		exc = rt.exception(t, nerr)
	}
	t.depth--
	if t.depth == 0 {
		if ferr := rt.SinkOf(t).Exit(t); ferr != nil && (exc == nil || ferr.IsKeyboardInterrupt()) {
			exc = ferr
		}
		// Back in the eval loop: pending signal handlers run now.
		if exc == nil {
			exc = rt.In.Signals.Check(t)
		}
	}
	if exc != nil {
		rt.Tel.Emit(telemetry.Exception{Thread: t.Name, Call: name, Type: exc.Type, Text: exc.Msg})
	}
	return exc
}

// exception turns a native error into the Python exception: the 127-byte
// message plus the call's Error lines (up to 1024 bytes), decoded as the
// policy says; a strict decode of invalid bytes raises UnicodeDecodeError.
func (rt *Runtime) exception(t *Thread, nerr *NativeError) *PyErr {
	main := pytext.ExceptionMessage(nerr.Msg)
	text, uerr := rt.SinkOf(t).ExceptionText(main, t.errs)
	if uerr != nil {
		return uerr
	}
	typ := nerr.Type
	if typ == "" {
		typ = "RuntimeError"
	}
	return &PyErr{Type: typ, Msg: text}
}

// Abort is the runtime's abort(): a real SIGABRT, so the parent sees
// "killed by signal 6" as after a C abort().
func (rt *Runtime) Abort(why string) {
	// A write(2) another thread dropped the GIL for ends first, or reaches
	// its next wait: whether its bytes were out before the process died
	// was the scheduler's (random search: pystderr, a thread's line whose
	// decode error terminates the process while main's flush of its line
	// was in flight: main's line lost in 6 of 480 plays; docs/TRUST.md).
	rt.G.WaitUntil(func() bool { return !rt.G.inFlightUnwaitingLocked(nil) })
	rt.Tel.Emit(telemetry.Abort{Why: why})
	signals.DieBy(syscall.SIGABRT)
}

// ImportModule is the binding's module imported (again) now, after the
// program changed the process (a capture of fd 2 made before the import):
// a policy that records something at install (Installer) records it now.
// A runtime's policy is installed once when the runtime starts; a program
// that imports the module later says so with this.
func (rt *Runtime) ImportModule(t *Thread) {
	p := rt.Policy
	if u, ok := p.(interface{ Unwrap() Policy }); ok {
		p = u.Unwrap()
	}
	if in, ok := p.(Installer); ok {
		in.Install(t)
	}
}
