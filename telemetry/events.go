package telemetry

// Over 400 lines on purpose: every event the child writes, one type after
// another, so that the telemetry's wire format reads in one place.

import "strings"

// Meta is where and when an event sat in its run; the decoder fills it, the
// writer ignores it (it is not part of the wire).
type Meta struct {
	At int     `json:"-"` // index in the run's events
	T  float64 `json:"-"` // "t": ms since the child started
}

func (m *Meta) setMeta(at int, t float64) { m.At, m.T = at, t }

// Payload is one event kind's fields; Kind is its "ev".
type Payload interface{ Kind() string }

// Start opens a run: the child's pid (for signals) and its parameters.
type Start struct {
	Meta
	Pid       int    `json:"pid"`
	Policy    string `json:"policy"`
	Platform  string `json:"platform"`
	Python    string `json:"python"`
	FD2       string `json:"fd2"`
	Sigint    string `json:"sigint"`
	Buffering string `json:"stderr,omitempty"` // buffered or unbuffered (python -u)
}

// Exit is the exit status the program chose (0 after "done").
type Exit struct {
	Meta
	Code int `json:"code"`
}

// Line is one log line the runtime emitted, before the sink saw it.
type Line struct {
	Meta
	Seq      int    `json:"seq"`
	Thread   string `json:"thread"`
	Daemon   bool   `json:"daemon"`
	Level    string `json:"level"`
	InCall   bool   `json:"in_call"`
	Replaced bool   `json:"replaced"` // sys.stderr was replaced when it was logged
	B        []byte `json:"b"`        // the exact bytes, newline included
}

// Route is where the sink sent a line.
type Route struct {
	Meta
	Seq    int    `json:"seq"`
	Thread string `json:"thread"`
	Route  string `json:"route"`
	Why    string `json:"why"`
}

// Flush: kept lines (and the note) written through sys.stderr.
type Flush struct {
	Meta
	Thread string `json:"thread"`
	Lines  int    `json:"lines"`
	Note   string `json:"note"`
	To     string `json:"to"`
}

// Fallback: a flush failed; its lines go straight to fd 2.
type Fallback struct {
	Meta
	Thread string `json:"thread"`
	Lines  int    `json:"lines"`
	Why    string `json:"why"`
}

// FatalFlush: the kept lines a sink's fatal path wrote to fd 2 before the
// fatal line Fatal (its sequence number); Left were not written. To is
// where they went: fd 2 (empty), or ToOutlivingCopy, with Drained the bytes
// the fatal path moved there from fd 2's forwarder pipe first.
type FatalFlush struct {
	Meta
	Thread  string   `json:"thread"`
	Fatal   int      `json:"fatal"`
	Written [][]byte `json:"written"`
	Left    int      `json:"left"`
	To      string   `json:"to,omitempty"`
	Drained int      `json:"drained,omitempty"`
}

// ToOutlivingCopy is FatalFlush.To for the descriptor open on what fd 2 was
// when the sink was installed (a forwarder's saved copy of the old fd 2).
const ToOutlivingCopy = "outliving copy"

// Dropped: lines a sink dropped on purpose, with why.
type Dropped struct {
	Meta
	Thread string `json:"thread"`
	Lines  int    `json:"lines"`
	Bytes  int    `json:"bytes"`
	Why    string `json:"why"`
}

// Exception: a Python exception raised to a caller (Call) or escaped to the
// top of a thread (Escaped).
type Exception struct {
	Meta
	Thread  string `json:"thread"`
	Call    string `json:"call,omitempty"`
	Type    string `json:"type"`
	Text    string `json:"text"`
	Escaped bool   `json:"escaped,omitempty"`
}

// Abort: the runtime is about to raise SIGABRT.
type Abort struct {
	Meta
	Why string `json:"why"`
}

// Attempt is one write an in-memory stream received.
type Attempt struct {
	Text    string `json:"text"`
	Written int    `json:"written"`
	Raised  string `json:"raised,omitempty"`
}

// Capture: an in-memory stream's text and write attempts, at exit.
type Capture struct {
	Meta
	Stream   string    `json:"stream"`
	Text     string    `json:"text"`
	Attempts []Attempt `json:"attempts"`
}

// CaptureFD2: fd 2 was pointed at a pipe a forwarder thread drains.
type CaptureFD2 struct {
	Meta
	Style     string `json:"style"`
	Chunk     int    `json:"chunk"`
	Pipe      int    `json:"pipe"`
	Forwarder string `json:"forwarder"`
}

// FD2 says what fd 2 became after a rearrangement.
type FD2 struct {
	Meta
	FDKind string `json:"kind"`
}

// BlockedWrite: a write to fd 2 blocked with Pending bytes left.
type BlockedWrite struct {
	Meta
	Thread  string `json:"thread"`
	Pending int    `json:"pending"`
	GIL     bool   `json:"gil"`
}

// WriteInterrupted: a signal ended a write(2) that had moved nothing
// (EINTR) and the writer gave up: Written bytes of the write went out, Lost
// did not.
type WriteInterrupted struct {
	Meta
	Thread  string `json:"thread"`
	Written int    `json:"written"`
	Lost    int    `json:"lost"`
	By      string `json:"by"`
}

// FD2Refused: the kernel refused a write(2) on fd 2 with Errno (EPIPE,
// EAGAIN, ENOSPC, EIO; the fd2-write-errno failpoint): B are the bytes the
// call offered, none of which went out.
type FD2Refused struct {
	Meta
	Thread string `json:"thread"`
	Errno  string `json:"errno"`
	B      []byte `json:"b"`
}

// Retained: an interrupted flush of sys.stderr's BufferedWriter left Bytes
// in its buffer; they go out with the next write or at exit.
type Retained struct {
	Meta
	Bytes int `json:"bytes"`
}

// Edge is one wait of a cycle: Thread holds Holds and waits for Waits,
// held by HeldBy.
type Edge struct {
	Thread string   `json:"thread"`
	Holds  []string `json:"holds"`
	Waits  string   `json:"waits"`
	HeldBy string   `json:"held_by"`
}

// Cycle: a wait-for cycle formed (KindCycle).
type Cycle struct {
	Meta
	Text  string `json:"text"`
	Edges []Edge `json:"edges"`
}

// ThreadState is one row of the lock table.
type ThreadState struct {
	Name   string   `json:"name"`
	Daemon bool     `json:"daemon,omitempty"`
	Holds  []string `json:"holds"`
	Waits  string   `json:"waits,omitempty"`
	HeldBy []string `json:"held_by,omitempty"`
	Ended  bool     `json:"ended,omitempty"`
}

// Phrase is the row's locks and wait, as the console and random search's
// FLAKY lines print it: "holds A and B waits for C (held by D)"; "" for a
// thread that holds nothing and waits for nothing.
func (s ThreadState) Phrase() string {
	var parts []string
	if len(s.Holds) > 0 {
		parts = append(parts, "holds "+strings.Join(s.Holds, " and "))
	}
	if s.Waits != "" {
		w := "waits for " + s.Waits
		if len(s.HeldBy) > 0 {
			w += " (held by " + strings.Join(s.HeldBy, ", ") + ")"
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, " ")
}

// LockTable is every thread's locks and wait.
type LockTable struct {
	Threads []ThreadState `json:"threads"`
}

// Dump is the child's reply to SIGQUIT (KindDump).
type Dump struct {
	Meta
	Locks  LockTable `json:"locks"`
	Stacks string    `json:"stacks"`
}

// Mark asks the parent to act now (KindMark): MarkSIGINT, MarkFD2Pause,
// MarkFD2Resume, MarkFD2Stall.
type Mark struct {
	Meta
	Name string `json:"name"`
	Ms   int64  `json:"ms,omitempty"` // MarkFD2Pause: how long
}

// Observed: the program saw the state it waits for before a mark.
type Observed struct {
	Meta
	Thread string `json:"thread"`
	Waits  string `json:"waits"`
	Then   string `json:"then"`
}

// Signal: a real signal reached the interpreter's C handler.
type Signal struct {
	Meta
	Signal string `json:"signal"`
}

// SetInterrupt: PyErr_SetInterrupt was called, with its effect.
type SetInterrupt struct {
	Meta
	Effect string `json:"effect"`
}

// Handler: the Python-level signal handler ran (Run counts the runs).
type Handler struct {
	Meta
	Signal  string `json:"signal"`
	Handler string `json:"handler"`
	Run     int    `json:"run"`
}

// StreamWait: a stream's write blocks until a signal.
type StreamWait struct {
	Meta
	Thread string `json:"thread"`
	Stream string `json:"stream"`
	For    string `json:"for"`
}

// DaemonRule is the platform x Python-version rule finalization applies.
type DaemonRule struct {
	Platform string `json:"platform"`
	Python   string `json:"python"`
	Fate     string `json:"fate"`
	Why      string `json:"why"`
}

// ScenarioError: the scenario refused to go on because a state it promised
// did not hold (the child then exits with scenario.ExitScenarioError).
type ScenarioError struct {
	Meta
	Reason string `json:"reason"`
}

// Finalize: interpreter finalization started.
type Finalize struct {
	Meta
	Thread     string     `json:"thread"`
	Rule       DaemonRule `json:"rule"`
	GILWaiters []string   `json:"gil_waiters"`
}

// DaemonFate: what a thread met after finalization (or where a forced unwind
// ended: Frame, FrameKind, Signal).
type DaemonFate struct {
	Meta
	Thread    string   `json:"thread"`
	Daemon    bool     `json:"daemon"`
	Fate      string   `json:"fate"`
	Why       string   `json:"why"`
	Holds     []string `json:"holds,omitempty"`
	Frame     string   `json:"frame,omitempty"`
	FrameKind string   `json:"frame_kind,omitempty"`
	Signal    string   `json:"signal,omitempty"`
}

// LazyQueue: a lazy-init callback was queued.
type LazyQueue struct {
	Meta
	Backend     string `json:"backend"`
	ID          string `json:"id"`
	Name        string `json:"name"`
	QueueKind   string `json:"kind"`
	Thread      string `json:"thread"`
	Initialized bool   `json:"initialized"`
}

// Callback: a queued callback ran (Path: drained or run now).
type Callback struct {
	Meta
	Backend string `json:"backend"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	Thread  string `json:"thread"`
	Variant string `json:"variant"`
	Path    string `json:"path"`
}

// NativeInit: the backend's native init ran.
type NativeInit struct {
	Meta
	Backend string `json:"backend"`
	Call    string `json:"call"`
	Thread  string `json:"thread"`
}

// Initialized: lazy init finished after draining Drained callbacks.
type Initialized struct {
	Meta
	Backend string `json:"backend"`
	Thread  string `json:"thread"`
	Drained int    `json:"drained"`
}

// MalformedEvent is written by the writer when an event cannot be encoded.
type MalformedEvent struct {
	Meta
	Of  string `json:"of"`
	Err string `json:"err"`
}

// The kinds.
const (
	KindStart        = "start"
	KindExit         = "exit"
	KindLine         = "line"
	KindRoute        = "route"
	KindFlush        = "flush"
	KindFallback     = "fallback"
	KindFatalFlush   = "fatal-flush"
	KindDropped      = "dropped"
	KindException    = "exception"
	KindAbort        = "abort"
	KindCapture      = "capture"
	KindCaptureFD2   = "capture-fd2"
	KindFD2          = "fd2"
	KindBlockedWrite = "blocked-write"
	KindWriteIntr    = "write-interrupted"
	KindRetained     = "retained"
	KindFD2Refused   = "fd2-refused"
	KindCycle        = "cycle"
	KindDump         = "dump"
	KindMark         = "mark"
	KindObserved     = "observed"
	KindSignal       = "signal"
	KindSetInterrupt = "set-interrupt"
	KindHandler      = "handler"
	KindStreamWait   = "stream-wait"
	KindFinalize     = "finalize"
	KindScenarioErr  = "scenario-error"
	KindDaemonFate   = "daemon-fate"
	KindLazyQueue    = "lazy-queue"
	KindCallback     = "callback"
	KindNativeInit   = "native-init"
	KindInitialized  = "initialized"
	KindMalformedEv  = "malformed-event"
	// KindMalformed is never written by a child: the reader gives it to a
	// line that is not a JSON object with a string "ev".
	KindMalformed = "malformed"
)

func (Start) Kind() string            { return KindStart }
func (Exit) Kind() string             { return KindExit }
func (Line) Kind() string             { return KindLine }
func (Route) Kind() string            { return KindRoute }
func (Flush) Kind() string            { return KindFlush }
func (Fallback) Kind() string         { return KindFallback }
func (FatalFlush) Kind() string       { return KindFatalFlush }
func (Dropped) Kind() string          { return KindDropped }
func (Exception) Kind() string        { return KindException }
func (Abort) Kind() string            { return KindAbort }
func (Capture) Kind() string          { return KindCapture }
func (CaptureFD2) Kind() string       { return KindCaptureFD2 }
func (FD2) Kind() string              { return KindFD2 }
func (BlockedWrite) Kind() string     { return KindBlockedWrite }
func (WriteInterrupted) Kind() string { return KindWriteIntr }
func (Retained) Kind() string         { return KindRetained }
func (FD2Refused) Kind() string       { return KindFD2Refused }
func (Cycle) Kind() string            { return KindCycle }
func (Dump) Kind() string             { return KindDump }
func (Mark) Kind() string             { return KindMark }
func (Observed) Kind() string         { return KindObserved }
func (Signal) Kind() string           { return KindSignal }
func (SetInterrupt) Kind() string     { return KindSetInterrupt }
func (Handler) Kind() string          { return KindHandler }
func (StreamWait) Kind() string       { return KindStreamWait }
func (Finalize) Kind() string         { return KindFinalize }
func (ScenarioError) Kind() string    { return KindScenarioErr }
func (DaemonFate) Kind() string       { return KindDaemonFate }
func (LazyQueue) Kind() string        { return KindLazyQueue }
func (Callback) Kind() string         { return KindCallback }
func (NativeInit) Kind() string       { return KindNativeInit }
func (Initialized) Kind() string      { return KindInitialized }
func (MalformedEvent) Kind() string   { return KindMalformedEv }

// Marks: the names of Mark events the parent acts on.
const (
	// MarkSIGINT: send the child one real SIGINT (to the pid of its Start).
	MarkSIGINT = "sigint"
	// MarkFD2Pause: the parent's reader of fd 2 stops reading for Ms
	// milliseconds, then reads on.
	MarkFD2Pause = "fd2-pause"
	// MarkFD2Resume: the parent's reader of fd 2 (one that starts stalled)
	// reads again now. A program whose verdict depends on how long fd 2
	// stays stalled asks for it once the state it needs holds, never after
	// a guessed delay.
	MarkFD2Resume = "fd2-resume"
	// MarkFD2Stall: the parent's reader of fd 2 stops reading before its
	// next read(2), until a MarkFD2Resume or a MarkFD2Pause's end; the
	// parent then sends the child StallAck, so that the child writes
	// nothing more before the stall is in place (the child waits for fd 2
	// to be drained before it asks: the stall starts at an exact byte).
	MarkFD2Stall = "fd2-stall"
	// MarkFD2Read: a room check found no room within its bound on a pipe
	// the parent drains; the parent's reader, unless stalled, reads what
	// the pipe holds, and the parent then sends the child StallAck. So a
	// check against a reader that reads on finds room, and one against a
	// stalled reader none, whatever the load kept the reader off the CPU
	// (docs/TRUST.md, "Random schedules: a seed decides the run").
	MarkFD2Read = "fd2-read"
	// MarkFD2Hold: a write(2) found no room on a pipe the parent drains;
	// from here the parent's reader reads only when asked
	// (MarkFD2ReadHeld), apart from any stall, until MarkFD2Release. The
	// parent sends StallAck once no read(2) is under way. So which thread's
	// bytes take the room a read frees is the model's decision, never the
	// reader's pace (docs/TRUST.md, "Whose bytes the parent's read lets in").
	MarkFD2Hold = "fd2-hold"
	// MarkFD2ReadHeld: a held reader reads what the pipe holds, once any
	// stall is over, then holds again; the parent then sends StallAck.
	MarkFD2ReadHeld = "fd2-read-held"
	// MarkFD2Release: the reader reads as bytes arrive again. The last
	// write call of a hold sends it and then asks MarkFD2Read, so the
	// pipe is read empty (or the reader is stalled) before it goes on.
	MarkFD2Release = "fd2-release"
	// MarkBlocked: every thread of a program that blocks by design waits
	// for something only the process could end (a lock, an unset event,
	// a thread's end), so nothing in it moves again: what it left on fd 2
	// is final. In fast mode the parent ends such a run (a contract that
	// ends killed) now, as its deadline would later; strict mode waits
	// for the deadline. It changes no verdict, only when it is seen.
	MarkBlocked = "blocked"
)

// FDEnv names the environment variable through which the parent tells the
// child which descriptor is the telemetry pipe.
const FDEnv = "WATCHDOG_TELEMETRY_FD"
