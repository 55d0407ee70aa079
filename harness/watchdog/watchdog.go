// Package watchdog runs one program in a child process under a deadline and
// reports what it did. Its one job is to be the observer outside the child's
// locks: a test of a deadlock must survive the deadlock, so the parent keeps
// the deadline and the verdict, and the child only reports.
//
// Run starts the child in its own process group, reads its stdout, stderr and
// telemetry concurrently, and at the deadline (or, in Fast mode, as soon as
// the child reports a wait-for cycle) sends SIGQUIT to the group so the child
// can dump its lock table and stacks, then SIGKILL after a grace period.
// Whatever happened, no process of the group is left when Run returns.
//
// # Telemetry
//
// The child finds a pipe open on fd 3 and may write JSON lines to it, each an
// object with at least "ev" (the kind) and optionally "t" (ms since the child
// started). The watchdog passes every event through (Result.Events,
// Config.OnEvent) and acts on three kinds: telemetry.KindCycle ("text", "edges"),
// telemetry.KindDump (the reply to SIGQUIT) and KindMark ("name"). A line that is not
// such an object is kept as a telemetry.KindMalformed event. Run also sets
// telemetry.FDEnv (WATCHDOG_TELEMETRY_FD=3) in the child's environment: an
// open fd 3 alone proves nothing, since a Go 1.25+ runtime opens its cgroup
// CPU files on the lowest free descriptors when nothing was passed. A child
// must also run without it (rerun by hand).
//
// # Verdicts
//
// Classification uses observations only, the first that applies: Hang (the
// deadline passed, or a cycle was reported in Fast mode), Interrupted (the
// context was cancelled or KillAll was called), Crash (killed by a signal the
// watchdog did not send), Failed (non-zero exit), NoMarker (exit 0 without the
// marker line on stdout), Completed. Callers whose child is expected to die
// by a signal, or to hang, decide that themselves from the Result.
//
// # Platforms
//
// Unix only. On Linux the child also gets Pdeathsig SIGKILL, so a test process
// killed outright does not orphan it; macOS has no such thing, so there only
// KillAll (from an interrupt handler) and the normal end of Run clean up.
// Neither platform reaps grandchildren on the watchdog's behalf: a grandchild
// killed with the group stays a zombie until its new parent (init, or a
// subreaper) reaps it.
package watchdog

import (
	"fmt"
	"time"

	"logjam/telemetry"
	"logjam/verdict"
)

// Mode says what a reported wait-for cycle does to the verdict.
type Mode int

const (
	// Fast: a reported cycle is a Hang at once (local runs).
	Fast Mode = iota
	// Strict: a reported cycle is noted, but the verdict waits for the
	// deadline, confirming the hang is real (nightly runs).
	Strict
)

func (m Mode) String() string {
	switch m {
	case Fast:
		return "fast"
	case Strict:
		return "strict"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Defaults for the zero values of Config.
const (
	DefaultGraceFloor = 2 * time.Second
	DefaultMarker     = "done"
)

// Config tells Run how long to wait and what counts as finishing.
type Config struct {
	// Deadline bounds the child's run; required. It is a bound on failure
	// detection, not a performance threshold: the caller scales it already.
	Deadline time.Duration
	// Scale is the one timeout-scale knob (1 when zero); it scales GraceFloor.
	Scale float64
	// GraceFloor is the least time between SIGQUIT and SIGKILL, before
	// scaling (DefaultGraceFloor when zero). See Grace.
	GraceFloor time.Duration
	// Mode: Fast (the zero value) or Strict.
	Mode Mode
	// Marker must appear as a whole line of stdout (surrounding whitespace
	// ignored) for an exit 0 to be Completed; DefaultMarker when empty.
	Marker string
	// Blocked, if set, says whether a telemetry event tells that the child
	// can only wait to be killed now (telemetry.MarkBlocked, from a program
	// that blocks by design). In Fast mode the first such event ends the
	// wait as the deadline would (SIGQUIT, then SIGKILL: a Hang); Strict
	// mode notes it and waits for the deadline, confirming it.
	Blocked func(telemetry.Event) bool
	// OnEvent, if set, is called for every telemetry event, in order, from
	// the goroutine reading fd 3. It must not block long: while it runs, the
	// child's telemetry writes can stall. Run waits for the last call to
	// return before it returns.
	OnEvent func(telemetry.Event)
}

// Grace returns the time the child gets between SIGQUIT and SIGKILL:
// max(GraceFloor*Scale, 5% of Deadline). Run returns within about this long
// after the deadline.
func (c Config) Grace() time.Duration {
	floor, scale := c.GraceFloor, c.Scale
	if floor <= 0 {
		floor = DefaultGraceFloor
	}
	if scale <= 0 {
		scale = 1
	}
	return max(time.Duration(float64(floor)*scale), c.Deadline/20)
}

// Result is everything the watchdog observed of one run.
type Result struct {
	Verdict verdict.Verdict
	// Reason is one readable sentence, e.g. "did not finish within 3s;
	// killed after SIGQUIT (dump received)" or "exited with status 3".
	Reason string
	// ExitCode is the exit status, or -1 when the child was killed by a
	// signal.
	ExitCode int
	// Signal names the signal that killed the child ("SIGSEGV"), "" if none;
	// SignalNumber is its number (0 if none).
	Signal       string
	SignalNumber int
	// Killed is true when the watchdog signalled the child (deadline, Fast
	// mode cycle, cancellation, KillAll).
	Killed bool
	// Duration runs from the start of the child to its end.
	Duration time.Duration
	// Pid is the child's process id, which is also its process group id.
	Pid int
	// Stdout and Stderr hold the stream when Run captured it (the caller
	// left cmd.Stdout / cmd.Stderr nil); nil when the caller owns it. At most
	// 64 MiB of each is kept; the bytes left out are counted in
	// StdoutOmitted / StderrOmitted.
	Stdout, Stderr               []byte
	StdoutOmitted, StderrOmitted int64
	// MarkerSeen is true when the marker line appeared on stdout.
	MarkerSeen bool
	// Events is all telemetry, in order. Cycle is the first KindCycle event,
	// Dump the last KindDump event; nil when there was none.
	Events []telemetry.Event
	Cycle  *telemetry.Event
	Dump   *telemetry.Event
	// Command reruns the child from a shell: cmd's directory, environment
	// changes and arguments, shell-quoted.
	Command string
}
