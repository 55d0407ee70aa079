// Package schedule is a random fault schedule: one value, drawn from a seed
// by pgregory.net/rapid generators (package gen), that says which faults the
// child plays, where and how big. It is plain data (JSON, and base64 of the
// JSON on a command line): the child (simrt -scenario R) plays it, the
// parent arranges fd 2 and signals from it, and the ledger judges the run
// as it judges any matrix cell. docs/CONTRACT.md says which schedules lie
// inside logjam's promise; the generator draws only those.
package schedule

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"logjam/failpoints"
	"logjam/internal/artifact"
	"logjam/internal/axes"
	"logjam/scenario"
)

// The families a schedule belongs to.
const (
	FamilySink     = "sink"     // the log path: fd 2, sys.stderr, threads, signals, aborts, exit
	FamilyLazyInit = "lazyinit" // the lazy device initialization
)

// Families lists them.
var Families = []string{FamilySink, FamilyLazyInit}

// Schedule is one random run.
type Schedule struct {
	Family string `json:"family"`
	// Policy is the log sink policy (sink) or the lazy-init variant.
	Policy   string `json:"policy"`
	Platform string `json:"platform"`
	Python   string `json:"python"`
	// Buffering is how Python opened sys.stderr: "" (buffered) or
	// "unbuffered" (python -u, PYTHONUNBUFFERED=1).
	Buffering string `json:"buffering,omitempty"`
	Sink      *Sink  `json:"sink,omitempty"`
	Lazy      *Lazy  `json:"lazy,omitempty"`
}

// Sink is a script against the log path.
type Sink struct {
	FD2    FD2    `json:"fd2"`
	Stderr Stderr `json:"stderr"`
	// SigintIgnored: the child starts with SIGINT ignored (`cmd &`).
	SigintIgnored bool `json:"sigint_ignored,omitempty"`
	// Sigint is a real SIGINT from the parent: "" none; SigintLine after
	// line SigintAt of the main thread's first call; SigintBlocked when the
	// main thread is the first to block on a stalled fd 2 (a pipe).
	Sigint   string `json:"sigint,omitempty"`
	SigintAt int    `json:"sigint_at,omitempty"`
	// Threads are the Python threads; Threads[0] is the main thread.
	Threads []Thread `json:"threads"`
	// Abort ends the main thread's last call.
	Abort *Abort `json:"abort,omitempty"`
	// Outside: lines a destructor logs outside any call, GIL held, after
	// the threads are joined, with OutsideText's text (nil: 128 ASCII
	// bytes, as schedules before the field was added).
	Outside     int   `json:"outside,omitempty"`
	OutsideText *Text `json:"outside_text,omitempty"`
	// Daemons: daemon threads that log through calls while the interpreter
	// exits.
	Daemons int `json:"daemons,omitempty"`
	// GILDroppedMs widens the daemons' exit window: a Python write to
	// sys.__stderr__ holds its line this many ms after it drops the GIL,
	// before write(2) (failpoints.PythonWriteGILDropped; 0: none). A
	// verdict must not move with it.
	GILDroppedMs int `json:"gil_dropped_ms,omitempty"`
}

// The fd-2 kinds.
const (
	FD2File      = "file"      // a temporary file
	FD2Pipe      = "pipe"      // a pipe the parent drains
	FD2PTY       = "pty"       // a pty the parent reads
	FD2IPyKernel = "ipykernel" // an in-child pipe drained by a forwarder that needs the GIL; sys.stderr its OutStream
	FD2Wurlitzer = "wurlitzer" // the same, sys.stderr left alone
)

// FD2 is what the child's fd 2 is.
type FD2 struct {
	Kind string `json:"kind"`
	// Capacity of the pipe in bytes (pipe, ipykernel, wurlitzer).
	Capacity int `json:"capacity,omitempty"`
	// Chunk is the forwarder's read size (ipykernel, wurlitzer).
	Chunk int `json:"chunk,omitempty"`
	// StallMs (pipe, pty): the parent's reader starts stalled; it reads
	// again once StallMs have passed since a thread first blocked on fd 2
	// and only the reader can move (every other thread waits), or at once
	// when the schedule's abort comes first (0: no stall). The stall's end
	// is a state of the run, never a time alone.
	StallMs int `json:"stall_ms,omitempty"`
	// Stalls (pipe): stalls of the parent's reader that start at marks of
	// the run, reached in their order; several are a stall that repeats.
	Stalls []Stall `json:"stalls,omitempty"`
	// Errors: write(2) calls on fd 2 the kernel refuses (nil: none).
	Errors *FD2Errors `json:"errors,omitempty"`
}

// FD2Errors are write(2) calls on fd 2 that the kernel refuses with Errno
// (failpoints.FD2WriteErrno), counted over the run's write calls on fd 2,
// every thread's: the first After go through, then Times are refused (0:
// every one from there on). EAGAIN is "no room" (someone set O_NONBLOCK
// on fd 2): a bounded run of them, as a stall ends; the others are
// refusals for good of the bytes offered.
type FD2Errors struct {
	Errno string `json:"errno"`
	After int    `json:"after,omitempty"`
	Times int    `json:"times,omitempty"`
}

// The errnos an fd-2 write may be refused with.
const (
	ErrnoEPIPE  = "EPIPE"
	ErrnoEAGAIN = "EAGAIN"
	ErrnoENOSPC = "ENOSPC"
	ErrnoEIO    = "EIO"
)

// Errnos lists them (the failpoint's choices).
var Errnos = []string{ErrnoEPIPE, ErrnoEAGAIN, ErrnoENOSPC, ErrnoEIO}

func (e *FD2Errors) validate() error {
	switch {
	case e == nil:
		return nil
	case !slices.Contains(Errnos, e.Errno):
		return fmt.Errorf("fd2 errors errno %q (accepted: %s)", e.Errno, strings.Join(Errnos, ", "))
	case e.After < 0 || e.After > 10000:
		return fmt.Errorf("fd2 errors after %d (accepted: 0 to 10000)", e.After)
	case e.Times < 0 || e.Times > 1000:
		return fmt.Errorf("fd2 errors times %d (accepted: 0 to 1000, 0 for every write from there on)", e.Times)
	case e.Errno == ErrnoEAGAIN && e.Times == 0:
		return fmt.Errorf("fd2 errors EAGAIN needs times > 0 (no room for ever is a reader that never reads: outside the contract)")
	}
	return nil
}

// terms is the failpoint's GO_FAILPOINTS terms.
func (e *FD2Errors) terms() string {
	act := fmt.Sprintf("return(%q)", e.Errno)
	if e.Times > 0 {
		act = fmt.Sprintf("%d*%s", e.Times, act)
	}
	if e.After > 0 {
		act = fmt.Sprintf("%d*off->%s", e.After, act)
	}
	return act
}

// The marks a stall starts at.
const (
	StallAtLine = "line" // before line Line of call Call of thread Thread (mid-call)
	StallAtExit = "exit" // as the script ends: after the joins, before main's lines outside a call, the daemons and the exit flush
	// StallAtAbort: in the aborting call, once the abort ended the other
	// stalls and fd 2 was drained, before the lines after it; those stop
	// before the first one the stalled pipe would not take whole, and the
	// Fatal message is as long as the call's lines: the fatal path meets a
	// full pipe with nothing kept.
	StallAtAbort = "abort"
)

// Stall is a stall of the parent's reader of fd 2 that starts at a mark:
// the thread at the mark waits until fd 2 is drained, the reader stops
// (acknowledged before the thread writes on), and it stays stopped until
// a writer waits for room on fd 2; it reads again once Ms have passed and
// only the reader can move (or at once when the schedule's abort comes
// first; a stall with a SIGINT reads again as I2 does, once the SIGINT's
// thread waits for room anew or nothing but the reader moves, whatever Ms
// says). So a stall starts at an exact byte and ends only once it was
// felt, whatever the machine's load.
type Stall struct {
	At     string `json:"at"`
	Thread int    `json:"thread,omitempty"`
	Call   int    `json:"call,omitempty"`
	Line   int    `json:"line,omitempty"`
	Ms     int    `json:"ms"`
	// Sigint: a real SIGINT when the main thread first blocks on fd 2
	// during this stall (not sent once the script is done, unless the
	// stall is the exit's).
	Sigint bool `json:"sigint,omitempty"`
	// Twice: a second SIGINT (a second Ctrl-C) once the first reached the
	// interpreter and the main thread waits for room anew, in a wait a
	// signal can end (needs Sigint).
	Twice bool `json:"twice,omitempty"`
	// SigintThread: the SIGINT lands on this thread's blocked write instead
	// of the main thread's (a stall at a line; the kernel delivered it
	// there, as macOS may); Python's handler still runs on the main thread.
	SigintThread int `json:"sigint_thread,omitempty"`
}

// The sys.stderr kinds.
const (
	StderrOriginal   = "original"
	StderrCaptured   = "captured"   // StringIO
	StderrSlow       = "slow"       // StringIO whose write sleeps DelayMs, GIL released
	StderrOSError    = "oserror"    // StringIO whose write raises OSError from its K-th call on
	StderrInterrupt  = "interrupt"  // StringIO whose K-th write raises KeyboardInterrupt (How: before, half)
	StderrSignalWait = "signalwait" // StringIO whose write waits for a SIGINT; a counting handler; the parent sends one
)

// Stderr is what sys.stderr is.
type Stderr struct {
	Kind    string `json:"kind"`
	K       int    `json:"k,omitempty"`
	How     string `json:"how,omitempty"`
	DelayMs int    `json:"delay_ms,omitempty"`
}

// Replaced reports whether sys.stderr is not sys.__stderr__.
func (s *Sink) Replaced() bool {
	return s.Stderr.Kind != StderrOriginal || s.FD2.Kind == FD2IPyKernel
}

// The SIGINT moments.
const (
	SigintLine    = "line"
	SigintBlocked = "blocked-write"
)

// Thread is one Python thread's calls.
type Thread struct {
	Calls []Call `json:"calls"`
	// Outside: lines this thread logs outside any call (a destructor, GIL
	// held) after its calls, with OutsideText's text (nil: 128 ASCII bytes).
	Outside     int   `json:"outside,omitempty"`
	OutsideText *Text `json:"outside_text,omitempty"`
}

// Text is a line's text class: Size message bytes, three-byte characters
// after a one-byte prefix (CJK), an invalid byte at byte Invalid (1-based;
// 0: none), as a call's lines have.
type Text struct {
	Size    int  `json:"size"`
	CJK     bool `json:"cjk,omitempty"`
	Invalid int  `json:"invalid,omitempty"`
}

func (t *Text) validate() error {
	if t == nil {
		return nil
	}
	if t.Size < 1 || t.Size > 2048 {
		return fmt.Errorf("outside_text size %d (accepted: 1 to 2048)", t.Size)
	}
	if t.Invalid < 0 || t.Invalid > t.Size {
		return fmt.Errorf("outside_text invalid %d (accepted: 0 to size)", t.Invalid)
	}
	return nil
}

// Call is one binding call: holding its backend's lock, the delegate logs
// Lines lines of Size message bytes.
type Call struct {
	// Backend: 0 or 1; threads that share a backend share its lock.
	Backend int    `json:"backend"`
	Lines   int    `json:"lines"`
	Size    int    `json:"size"`
	Level   string `json:"level"` // I or E
	// Invalid: an invalid UTF-8 byte (0xff) at this byte of each message
	// (0: none; 1-based).
	Invalid int `json:"invalid,omitempty"`
	// CJK: the message is three-byte characters after a one-byte prefix
	// (so the logger's 255-byte cut and the 1024-byte cut of appended
	// Error lines can fall inside a character).
	CJK bool `json:"cjk,omitempty"`
	// WaitFor is a seeded switch point: holding the backend lock, before
	// logging, the thread waits until thread WaitFor-1 waits for something
	// or has ended (0: none).
	WaitFor int `json:"wait_for,omitempty"`
	// Yield: after the call the eval loop hands the GIL over.
	Yield bool `json:"yield,omitempty"`
	// Fails: the call raises RuntimeError with a native message of
	// FailChars three-byte characters (the 127-byte cut falls inside one
	// or not) after its Error lines (appended up to 1024 bytes).
	Fails     bool `json:"fails,omitempty"`
	FailChars int  `json:"fail_chars,omitempty"`
	// Nested: before the call returns, with its backend lock let go, its
	// native code calls back into Python (GIL held), and the callback
	// makes this binding call: nested inside the first, one level deep. A
	// nested call's own error is caught by the callback.
	Nested *Call `json:"nested,omitempty"`
}

// Abort ends the main thread's last call: when fd 2 is a stalled pipe or
// pty, the stall ends there and the delegate works on until fd 2 is
// drained; then it logs After lines, then a Fatal line (the runtime
// aborts) or, without Fatal, calls abort() itself.
type Abort struct {
	Fatal bool `json:"fatal,omitempty"`
	After int  `json:"after"`
}

// Lazy is a script against one lazy-init backend.
type Lazy struct {
	Backend string `json:"backend"`
	// Race: first, the L3 race (thread A passes the fast-path checks and
	// pauses before the lock; B initializes and drains).
	Race bool `json:"race,omitempty"`
	// Ops are the main thread's calls, in order; an init() always follows.
	Ops []string `json:"ops"`
}

// The lazy-init operations.
const (
	OpCall      = "call"          // _lazy_call(cb)
	OpCallRNG   = "call-set-rng"  // _lazy_call(lambda: set_rng_state(s)): the callback re-enters
	OpCallSeed  = "call-seed"     // _lazy_call(lambda: manual_seed(42)): the callback re-enters
	OpInit      = "init"          // init()
	OpGetRNG    = "get-rng-state" // get_rng_state(): initializes lazily
	lazyRaceCBs = 3               // the race: one queued before it, A's lambda, set_rng_state's callback
)

// Callbacks is how many callbacks the lazy script submits, each of which
// must run once.
func (l *Lazy) Callbacks() int {
	n := 0
	if l.Race {
		n += lazyRaceCBs
	}
	for _, op := range l.Ops {
		switch op {
		case OpCall:
			n++
		case OpCallRNG, OpCallSeed:
			n += 2
		}
	}
	return n
}

// Encode is the schedule as one command-line word: base64 (URL alphabet,
// no padding) of its compact JSON.
func (s Schedule) Encode() string {
	return base64.RawURLEncoding.EncodeToString(s.JSON())
}

// JSON is the schedule's compact JSON.
func (s Schedule) JSON() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return b
}

// Decode reads a schedule from Encode's form or from its JSON (strict:
// internal/artifact.Decode), and validates it.
func Decode(raw string) (Schedule, error) {
	raw = strings.TrimSpace(raw)
	var b []byte
	if strings.HasPrefix(raw, "{") {
		b = []byte(raw)
	} else {
		var err error
		if b, err = base64.RawURLEncoding.DecodeString(raw); err != nil {
			return Schedule{}, fmt.Errorf("schedule: neither JSON nor base64 of JSON: %v", err)
		}
	}
	var s Schedule
	if err := artifact.Decode(b, &s); err != nil { // strict JSON: internal/artifact's rules
		return Schedule{}, fmt.Errorf("schedule: %v", err)
	}
	if err := s.Validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// Policies and variants a schedule may name (the matrix's own lists).
var (
	SinkPolicies = axes.Policies
	LazyVariants = axes.LazyVariants
	LazyBackends = []string{"cuda", "xpu", "mtia"}
	Platforms    = []string{"linux", "macos"}
	Pythons      = []string{scenario.DefaultPython, "3.13.7", "3.13.8", "3.14", "3.10"}
	Bufferings   = []string{"", "unbuffered"}
)

// patchRelease is an exact CPython release the model knows (3.10.Z to
// 3.15.Z): the real calibration replays a schedule on the interpreter it
// has (3.11.7, 3.13.0), which random search never draws.
var patchRelease = regexp.MustCompile(`^3\.1[0-5]\.[0-9]{1,2}$`)

// Validate checks the schedule's shape and bounds; a schedule that passes
// can be played.
func (s Schedule) Validate() error {
	bad := func(format string, args ...any) error { return fmt.Errorf("schedule: "+format, args...) }
	if !slices.Contains(Platforms, s.Platform) {
		return bad("platform %q (accepted: %s)", s.Platform, strings.Join(Platforms, ", "))
	}
	if !slices.Contains(Pythons, s.Python) && !patchRelease.MatchString(s.Python) {
		return bad("python %q (accepted: %s, or a release 3.10.Z to 3.15.Z)", s.Python, strings.Join(Pythons, ", "))
	}
	if !slices.Contains(Bufferings, s.Buffering) {
		return bad("buffering %q (accepted: unbuffered, or none for buffered)", s.Buffering)
	}
	switch s.Family {
	case FamilySink:
		if !slices.Contains(SinkPolicies, s.Policy) {
			return bad("policy %q (accepted: %s)", s.Policy, strings.Join(SinkPolicies, ", "))
		}
		if s.Sink == nil || s.Lazy != nil {
			return bad("a sink schedule has a sink part and no lazy part")
		}
		return s.Sink.validate()
	case FamilyLazyInit:
		if !slices.Contains(LazyVariants, s.Policy) {
			return bad("variant %q (accepted: %s)", s.Policy, strings.Join(LazyVariants, ", "))
		}
		if s.Lazy == nil || s.Sink != nil {
			return bad("a lazyinit schedule has a lazy part and no sink part")
		}
		return s.Lazy.validate()
	}
	return bad("family %q (accepted: %s)", s.Family, strings.Join(Families, ", "))
}

func (s *Sink) validate() error {
	for _, part := range []func() error{s.FD2.validate, s.Stderr.validate, s.validateThreads, s.validateStalls, s.validateSignal, s.validateCounts} {
		if err := part(); err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
	}
	return nil
}

// Each validate below is a list of rules, the first broken one the error.

func (f FD2) validate() error {
	piped := f.Kind == FD2Pipe || f.Kind == FD2IPyKernel || f.Kind == FD2Wurlitzer
	switch {
	case !slices.Contains([]string{FD2File, FD2Pipe, FD2PTY, FD2IPyKernel, FD2Wurlitzer}, f.Kind):
		return fmt.Errorf("fd2 kind %q (accepted: file, pipe, pty, ipykernel, wurlitzer)", f.Kind)
	case (f.Kind == FD2Pipe || f.Kind == FD2PTY) && (f.StallMs < 0 || f.StallMs > 2000):
		return fmt.Errorf("fd2 stall_ms %d (accepted: 0 to 2000)", f.StallMs)
	case (f.Kind == FD2IPyKernel || f.Kind == FD2Wurlitzer) && (f.Chunk < 1 || f.Chunk > 65536):
		return fmt.Errorf("fd2 chunk %d (accepted: 1 to 65536)", f.Chunk)
	case piped && (f.Capacity < 4096 || f.Capacity > 65536 || f.Capacity&(f.Capacity-1) != 0):
		return fmt.Errorf("fd2 capacity %d (accepted: a power of two from 4096 to 65536)", f.Capacity)
	case len(f.Stalls) > 0 && f.Kind != FD2Pipe:
		return fmt.Errorf("fd2 stalls need fd2 kind pipe (a drained pipe is what a stall starts from)")
	case len(f.Stalls) > 3:
		return fmt.Errorf("fd2 %d stalls (accepted: up to 3)", len(f.Stalls))
	}
	return f.Errors.validate()
}

// validateStalls checks each stall's mark against the threads and calls.
func (s *Sink) validateStalls() error {
	sigints, exits, aborts := 0, 0, 0
	for i, st := range s.FD2.Stalls {
		if st.Ms < 1 || st.Ms > 2000 {
			return fmt.Errorf("fd2 stall %d ms %d (accepted: 1 to 2000)", i, st.Ms)
		}
		if st.Sigint {
			sigints++
		}
		if (st.Twice || st.SigintThread != 0) && !st.Sigint {
			return fmt.Errorf("fd2 stall %d: twice and sigint_thread need sigint", i)
		}
		if st.SigintThread < 0 || st.SigintThread >= len(s.Threads) || st.SigintThread > 0 && st.At != StallAtLine {
			return fmt.Errorf("fd2 stall %d sigint_thread %d (accepted: 0 to %d, another than 0 only at a line)", i, st.SigintThread, len(s.Threads)-1)
		}
		switch st.At {
		case StallAtExit, StallAtAbort:
			if st.At == StallAtExit {
				exits++
			} else {
				aborts++
				if s.Abort == nil {
					return fmt.Errorf("fd2 stall %d at the abort of a schedule with no abort", i)
				}
			}
			if st.Thread != 0 || st.Call != 0 || st.Line != 0 {
				return fmt.Errorf("fd2 stall %d at %s names no thread, call or line", i, st.At)
			}
		case StallAtLine:
			if st.Thread < 0 || st.Thread >= len(s.Threads) || st.Call < 0 || st.Call >= len(s.Threads[st.Thread].Calls) {
				return fmt.Errorf("fd2 stall %d: thread %d call %d does not exist", i, st.Thread, st.Call)
			}
			if n := s.Threads[st.Thread].Calls[st.Call].Lines; st.Line < 0 || st.Line > n {
				return fmt.Errorf("fd2 stall %d line %d (accepted: 0 to %d, the call's lines)", i, st.Line, n)
			}
		default:
			return fmt.Errorf("fd2 stall %d at %q (accepted: line, exit, abort)", i, st.At)
		}
	}
	switch {
	case sigints > 1:
		return fmt.Errorf("fd2 stalls: %d with a SIGINT (accepted: one)", sigints)
	case exits > 1 || aborts > 1:
		return fmt.Errorf("fd2 stalls: %d at exit, %d at the abort (accepted: one each)", exits, aborts)
	}
	return nil
}

func (e Stderr) validate() error {
	switch {
	case !slices.Contains([]string{StderrOriginal, StderrCaptured, StderrSignalWait, StderrSlow, StderrOSError, StderrInterrupt}, e.Kind):
		return fmt.Errorf("stderr kind %q (accepted: original, captured, slow, oserror, interrupt, signalwait)", e.Kind)
	case e.Kind == StderrSlow && (e.DelayMs < 1 || e.DelayMs > 200):
		return fmt.Errorf("stderr delay_ms %d (accepted: 1 to 200)", e.DelayMs)
	case (e.Kind == StderrOSError || e.Kind == StderrInterrupt) && (e.K < 1 || e.K > 100):
		return fmt.Errorf("stderr k %d (accepted: 1 to 100)", e.K)
	case e.Kind == StderrInterrupt && e.How != "before" && e.How != "half":
		return fmt.Errorf("stderr how %q (accepted: before, half)", e.How)
	}
	return nil
}

func (s *Sink) validateThreads() error {
	switch {
	case s.Stderr.Kind != StderrOriginal && s.FD2.Kind == FD2IPyKernel:
		return fmt.Errorf("with fd2 ipykernel, sys.stderr is the OutStream (stderr kind original)")
	case len(s.Threads) < 1 || len(s.Threads) > 4:
		return fmt.Errorf("%d threads (accepted: 1 to 4)", len(s.Threads))
	case len(s.Threads[0].Calls) < 1:
		return fmt.Errorf("the main thread makes at least one call")
	}
	if err := s.OutsideText.validate(); err != nil {
		return err
	}
	for i, t := range s.Threads {
		if err := t.validate(len(s.Threads)); err != nil {
			return fmt.Errorf("thread %d%w", i, err)
		}
	}
	return nil
}

// validate's error continues "thread N".
func (t Thread) validate(threads int) error {
	switch {
	case len(t.Calls) > 4:
		return fmt.Errorf(": %d calls (accepted: up to 4)", len(t.Calls))
	case t.Outside < 0 || t.Outside > 512:
		return fmt.Errorf(": outside %d (accepted: 0 to 512)", t.Outside)
	}
	if err := t.OutsideText.validate(); err != nil {
		return fmt.Errorf(": %w", err)
	}
	for j, c := range t.Calls {
		if err := c.validate(threads); err != nil {
			return fmt.Errorf(" call %d: %w", j, err)
		}
	}
	return nil
}

func (s *Sink) validateSignal() error {
	switch {
	case s.Sigint != "" && s.Sigint != SigintLine && s.Sigint != SigintBlocked:
		return fmt.Errorf("sigint %q (accepted: line, blocked-write)", s.Sigint)
	case s.Sigint == SigintLine && (s.SigintAt < 0 || s.SigintAt > s.Threads[0].Calls[0].Lines):
		return fmt.Errorf("sigint_at %d (accepted: 0 to the lines of the main thread's first call)", s.SigintAt)
	case s.Sigint == SigintBlocked && (s.FD2.Kind != FD2Pipe || s.FD2.StallMs == 0):
		return fmt.Errorf("sigint blocked-write needs fd2 a stalled pipe (stall_ms > 0)")
	}
	return nil
}

func (s *Sink) validateCounts() error {
	switch {
	case s.Abort != nil && (s.Abort.After < 0 || s.Abort.After > 64):
		return fmt.Errorf("abort after %d (accepted: 0 to 64)", s.Abort.After)
	case s.Outside < 0 || s.Outside > 512:
		return fmt.Errorf("outside %d (accepted: 0 to 512)", s.Outside)
	case s.Daemons < 0 || s.Daemons > 4:
		return fmt.Errorf("daemons %d (accepted: 0 to 4)", s.Daemons)
	case s.GILDroppedMs < 0 || s.GILDroppedMs > 50:
		return fmt.Errorf("gil_dropped_ms %d (accepted: 0 to 50)", s.GILDroppedMs)
	}
	return nil
}

func (c Call) validate(threads int) error {
	switch {
	case c.Backend < 0 || c.Backend > 1:
		return fmt.Errorf("backend %d (accepted: 0, 1)", c.Backend)
	case c.Lines < 0 || c.Lines > 1024:
		return fmt.Errorf("lines %d (accepted: 0 to 1024)", c.Lines)
	case c.Size < 1 || c.Size > 2048:
		return fmt.Errorf("size %d (accepted: 1 to 2048)", c.Size)
	case c.Level != "I" && c.Level != "E":
		return fmt.Errorf("level %q (accepted: I, E)", c.Level)
	case c.Invalid < 0 || c.Invalid > c.Size:
		return fmt.Errorf("invalid %d (accepted: 0 to size)", c.Invalid)
	case c.WaitFor < 0 || c.WaitFor > threads:
		return fmt.Errorf("wait_for %d (accepted: 0 to %d)", c.WaitFor, threads)
	case c.FailChars < 0 || c.FailChars > 64:
		return fmt.Errorf("fail_chars %d (accepted: 0 to 64)", c.FailChars)
	case c.Nested != nil && c.Nested.Nested != nil:
		return fmt.Errorf("a nested call nests another (accepted: one level)")
	}
	if c.Nested != nil {
		if err := c.Nested.validate(threads); err != nil {
			return fmt.Errorf("nested: %w", err)
		}
	}
	return nil
}

func (l *Lazy) validate() error {
	if !slices.Contains(LazyBackends, l.Backend) {
		return fmt.Errorf("schedule: lazy backend %q (accepted: %s)", l.Backend, strings.Join(LazyBackends, ", "))
	}
	if len(l.Ops) > 8 {
		return fmt.Errorf("schedule: %d lazy ops (accepted: up to 8)", len(l.Ops))
	}
	for _, op := range l.Ops {
		if !slices.Contains([]string{OpCall, OpCallRNG, OpCallSeed, OpInit, OpGetRNG}, op) {
			return fmt.Errorf("schedule: lazy op %q (accepted: call, call-set-rng, call-seed, init, get-rng-state)", op)
		}
	}
	return nil
}

// Failpoints is the GO_FAILPOINTS value the child runs with: the stream
// faults of sys.stderr, the widened window, fd 2's refused writes.
// Everything else the schedule drives in-process.
func (s Schedule) Failpoints() failpoints.Set {
	if s.Sink == nil {
		return nil
	}
	st := s.Sink.Stderr
	var set failpoints.Set
	switch st.Kind {
	case StderrSlow:
		set = failpoints.Set{{Name: failpoints.StreamWriteDelay, Terms: fmt.Sprintf("return(%d)", st.DelayMs)}}
	case StderrOSError:
		set = failpoints.Set{{Name: failpoints.StreamWriteOSError, Terms: nthThenOn(st.K, "return(true)")}}
	case StderrInterrupt:
		set = failpoints.Set{{Name: failpoints.StreamWriteInterrupt, Terms: nthOnce(st.K, fmt.Sprintf("return(%q)", st.How))}}
	}
	if ms := s.Sink.GILDroppedMs; ms > 0 {
		set = append(set, failpoints.Term{Name: failpoints.PythonWriteGILDropped, Terms: fmt.Sprintf("return(%d)", ms)})
	}
	if e := s.Sink.FD2.Errors; e != nil {
		set = append(set, failpoints.Term{Name: failpoints.FD2WriteErrno, Terms: e.terms()})
	}
	return set
}

// nthThenOn fires from the k-th evaluation on; nthOnce at the k-th only.
func nthThenOn(k int, act string) string {
	if k <= 1 {
		return act
	}
	return fmt.Sprintf("%d*off->%s", k-1, act)
}

func nthOnce(k int, act string) string {
	if k <= 1 {
		return "1*" + act
	}
	return fmt.Sprintf("%d*off->1*%s", k-1, act)
}

// Faults counts what a schedule injects, for the shrink ratio: each thread
// beyond the main one, each call, each fault, each daemon, each stalled or
// captured fd 2 and replaced sys.stderr.
func (s Schedule) Faults() int {
	if s.Lazy != nil {
		n := len(s.Lazy.Ops)
		if s.Lazy.Race {
			n++
		}
		return n
	}
	k := s.Sink
	n := len(k.Threads) - 1 + k.Daemons
	if k.GILDroppedMs > 0 {
		n++
	}
	if k.FD2.Kind != FD2File {
		n++
	}
	if k.FD2.StallMs > 0 {
		n++
	}
	if k.FD2.Errors != nil {
		n++
	}
	for _, st := range k.FD2.Stalls {
		n++
		if st.Sigint {
			n++
		}
		if st.Twice {
			n++
		}
	}
	if k.Stderr.Kind != StderrOriginal {
		n++
	}
	if k.SigintIgnored {
		n++
	}
	if k.Sigint != "" {
		n++
	}
	if k.Abort != nil {
		n++
	}
	if k.Outside > 0 {
		n++
	}
	n += k.OutsideText.faults()
	for _, t := range k.Threads {
		if t.Outside > 0 {
			n++
		}
		n += t.OutsideText.faults()
		for _, c := range t.Calls {
			n += c.faults()
		}
	}
	return n
}

// Lines is how many lines the schedule's calls log (daemons aside).
func (s Schedule) Lines() int {
	if s.Sink == nil {
		return 0
	}
	n := 0
	s.Sink.eachLines(func(lines, _ int) { n += lines })
	if s.Sink.Abort != nil {
		n += s.Sink.Abort.After
	}
	return n
}

// MessageBytes is how many message bytes the threads log, in calls and
// outside them (daemons and the lines after an abort aside).
func (s Schedule) MessageBytes() int {
	if s.Sink == nil {
		return 0
	}
	n := 0
	s.Sink.eachLines(func(lines, size int) { n += lines * size })
	return n
}

// eachLines calls fn with each run of lines the threads log, and their
// message size: the lines outside a call, each call's, each nested call's.
func (k *Sink) eachLines(fn func(lines, size int)) {
	fn(k.Outside, k.OutsideText.size())
	for _, t := range k.Threads {
		fn(t.Outside, t.OutsideText.size())
		for _, c := range t.Calls {
			fn(c.Lines, c.Size)
			if c.Nested != nil {
				fn(c.Nested.Lines, c.Nested.Size)
			}
		}
	}
}

// faults counts a call's faults: the call, its invalid byte, switch point
// and failure, and its nested call's.
func (c Call) faults() int {
	n := 1
	if c.Invalid > 0 {
		n++
	}
	if c.WaitFor > 0 {
		n++
	}
	if c.Fails {
		n++
	}
	if c.Nested != nil {
		n += c.Nested.faults()
	}
	return n
}

// size is a line's message size in this text class (nil: the 128 ASCII
// bytes of a line outside a call with no text class).
func (t *Text) size() int {
	if t == nil {
		return 128
	}
	return t.Size
}

// faults counts a text class's faults: multi-byte text, an invalid byte.
func (t *Text) faults() int {
	n := 0
	if t != nil && t.CJK {
		n++
	}
	if t != nil && t.Invalid > 0 {
		n++
	}
	return n
}
