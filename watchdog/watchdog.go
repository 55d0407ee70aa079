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
// Config.OnEvent) and acts on three kinds: KindCycle ("text", "edges"),
// KindDump (the reply to SIGQUIT) and KindMark ("name"). A line that is not
// such an object is kept as a KindMalformed event. Run also sets
// TelemetryFDEnv (WATCHDOG_TELEMETRY_FD=3) in the child's environment: an
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
	"context"
	"errors"
	"fmt"
	"io"
	"logjam/signals"
	"logjam/telemetry"
	"logjam/verdict"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
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

// Verdict is what the child did, in one word (see package verdict).
type Verdict = verdict.Verdict

// The verdicts Run gives, in the order it checks them (verdict.Precedence).
const (
	Hang        = verdict.Hang
	Interrupted = verdict.Interrupted
	Crash       = verdict.Crash
	Failed      = verdict.Failed
	NoMarker    = verdict.NoMarker
	Completed   = verdict.Completed
)

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
	// OnEvent, if set, is called for every telemetry event, in order, from
	// the goroutine reading fd 3. It must not block long: while it runs, the
	// child's telemetry writes can stall. Run waits for the last call to
	// return before it returns.
	OnEvent func(Event)
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
	Verdict Verdict
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
	Events []Event
	Cycle  *Event
	Dump   *Event
	// Command reruns the child from a shell: cmd's directory, environment
	// changes and arguments, shell-quoted.
	Command string
}

// Run starts cmd and waits for it under cfg; see the package documentation.
// The error is only for failing to start (or a cancelled ctx before the
// start); everything the child did is in the Result.
//
// Run takes over parts of cmd: the child gets its own process group
// (SysProcAttr.Setpgid, unless the caller set Setsid, which also makes one),
// fd 3 is the telemetry pipe (cmd.ExtraFiles[0]; the caller's ExtraFiles, if
// any, follow at fd 4 and up), and cmd.WaitDelay defaults to the grace
// period. stdout and stderr are captured into the Result when cmd.Stdout /
// cmd.Stderr are nil. When the caller sets one, the caller owns that stream
// and the Result has none of it: an *os.File (a pipe or pty the caller reads
// itself) is handed to the child as is, so stdout given as a file cannot be
// checked for the marker (an exit 0 is then NoMarker, saying why); any other
// io.Writer is fed from a pipe Run reads, and stdout is still scanned for the
// marker (with the same writer for both streams, stderr lines count too).
// Do not use exec.CommandContext's cancellation to end the child: pass ctx
// here, so the whole group is killed.
func Run(ctx context.Context, cmd *exec.Cmd, cfg Config) (*Result, error) {
	switch {
	case cmd == nil:
		return nil, errors.New("watchdog: nil Cmd")
	case cmd.Process != nil:
		return nil, errors.New("watchdog: Cmd already started")
	case cfg.Deadline <= 0:
		return nil, errors.New("watchdog: Config.Deadline must be positive")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	grace := cfg.Grace()
	marker := cfg.Marker
	if marker == "" {
		marker = DefaultMarker
	}
	command := renderCommand(cmd, os.Environ())

	p, err := plumb(cmd, marker, grace)
	if err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}

	// Pdeathsig fires when the thread that started the child exits, not the
	// process. Start and wait on a goroutine locked to its thread, so that
	// thread lives exactly as long as the child.
	type startOutcome struct {
		process *os.Process
		err     error
	}
	startedCh := make(chan startOutcome, 1)
	waited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			startedCh <- startOutcome{err: err}
			return
		}
		startedCh <- startOutcome{process: cmd.Process}
		waited <- cmd.Wait()
	}()
	outcome := <-startedCh
	if outcome.err != nil {
		p.closeAll()
		return nil, outcome.err
	}
	started := time.Now()
	pid := outcome.process.Pid
	group := registerGroup(outcome.process)
	defer unregisterGroup(group)
	p.closeChildEnds()

	rec := newRecorder(started, cfg.OnEvent)
	telemetryDone := make(chan struct{})
	go func() {
		defer close(telemetryDone)
		telemetry.Read(p.telemetry, rec.add)
	}()
	for _, s := range p.captures() {
		go s.copy()
	}

	cause, waitErr, exited := watch(ctx, cfg, group, rec, waited)
	stoppedAt := time.Now()
	res := &Result{Pid: pid, Command: command, ExitCode: -1}
	var quit quitOutcome
	switch cause {
	case stopDeadline, stopCycle:
		res.Killed = true
		quit = quitThenKill(ctx, group, rec, waited, stoppedAt.Add(grace-grace/4))
		if quit.exited {
			waitErr, exited = quit.waitErr, true
		}
	case stopContext, stopKillAll:
		res.Killed = true
		group.kill()
	}
	if !exited {
		waitErr = <-waited
	}
	res.Duration = time.Since(started)
	// Leave no process of the group behind, whatever the verdict: a
	// grandchild may outlive the child and hold its pipes.
	group.kill()

	drainUntil := time.Now().Add(drainAllowance(grace))
	if cause == stopDeadline || cause == stopCycle {
		drainUntil = later(drainUntil, stoppedAt.Add(grace))
	}
	p.drain(telemetryDone, drainUntil)

	events, cycle, dump, cycleAt := rec.snapshot()
	res.Events, res.Cycle, res.Dump = events, cycle, dump
	if p.stdout != nil {
		kept, omitted, seen := p.stdout.snapshot()
		if p.stdout.keep {
			res.Stdout, res.StdoutOmitted = kept, omitted
		}
		res.MarkerSeen = seen
	}
	if p.stderr != nil && p.stderr.keep {
		res.Stderr, res.StderrOmitted, _ = p.stderr.snapshot()
	}
	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal, res.SignalNumber = signals.Name(ws.Signal()), int(ws.Signal())
		} else {
			res.ExitCode = st.ExitCode()
		}
	}
	res.Verdict, res.Reason = classify(res, classifyInput{
		cause: cause, cfg: cfg, ctx: ctx, marker: marker, grace: grace,
		stdoutUnseen: p.stdout == nil, stateKnown: cmd.ProcessState != nil, waitErr: waitErr,
		cycleAt: cycleAt, quit: quit,
	})
	return res, nil
}

// stopCause is why the watchdog stopped waiting for the child to end by itself.
type stopCause int

const (
	stopNone     stopCause = iota // the child ended by itself
	stopDeadline                  // the deadline passed
	stopCycle                     // Fast mode and a cycle was reported
	stopContext                   // ctx was cancelled
	stopKillAll                   // KillAll was called
)

// watch waits for the first thing that ends the run.
func watch(ctx context.Context, cfg Config, group *liveGroup, rec *recorder, waited <-chan error) (cause stopCause, waitErr error, exited bool) {
	deadline := time.NewTimer(cfg.Deadline)
	defer deadline.Stop()
	cycleSeen := rec.cycleSeen
	for cause == stopNone && !exited {
		select {
		case waitErr = <-waited:
			exited = true
		case <-cycleSeen:
			cycleSeen = nil // strict mode: noted once, keep waiting
			if cfg.Mode == Fast {
				cause = stopCycle
			}
		case <-deadline.C:
			cause = stopDeadline
		case <-ctx.Done():
			cause = stopContext
		case <-group.killed:
			cause = stopKillAll
		}
	}
	if !exited {
		// An end that raced with the child's own exit: the exit wins, it
		// is the observation.
		select {
		case waitErr = <-waited:
			exited, cause = true, stopNone
		default:
		}
	}
	// KillAll closes group.killed before it signals, so a child it killed
	// is never mistaken for a crash.
	select {
	case <-group.killed:
		cause = stopKillAll
	default:
	}
	return cause, waitErr, exited
}

// quitOutcome is what happened between SIGQUIT and SIGKILL.
type quitOutcome struct {
	gotDump bool // a KindDump event arrived
	exited  bool // the child ended by itself (e.g. Go's default SIGQUIT handler)
	waitErr error
}

// quitThenKill asks the group for a dump with SIGQUIT, waits for the dump (or
// the child's end, or quitUntil), then kills the group.
func quitThenKill(ctx context.Context, group *liveGroup, rec *recorder, waited <-chan error, quitUntil time.Time) quitOutcome {
	var q quitOutcome
	// Only a dump that answers this SIGQUIT counts.
	select {
	case <-rec.dumpSeen:
	default:
	}
	group.quit()
	timer := time.NewTimer(time.Until(quitUntil))
	defer timer.Stop()
	select {
	case <-rec.dumpSeen:
		q.gotDump = true
	case q.waitErr = <-waited:
		q.exited = true
	case <-timer.C:
	case <-ctx.Done():
	case <-group.killed:
	}
	group.kill()
	return q
}

// drainAllowance is how long Run waits, after killing the group, for the
// pipes to reach EOF. Killing the group closes every write end it held, so
// only a process that left the group can make Run wait this long.
func drainAllowance(grace time.Duration) time.Duration {
	return min(max(grace/4, 250*time.Millisecond), time.Second)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

type classifyInput struct {
	cause        stopCause
	cfg          Config
	ctx          context.Context
	marker       string
	grace        time.Duration
	stdoutUnseen bool // stdout is the caller's file: the marker could not be checked
	stateKnown   bool // the child was reaped
	waitErr      error
	cycleAt      time.Duration
	quit         quitOutcome
}

// classify decides the verdict from the observations, first that applies.
func classify(res *Result, in classifyInput) (Verdict, string) {
	switch in.cause {
	case stopDeadline, stopCycle:
		var b strings.Builder
		if in.cause == stopCycle {
			fmt.Fprintf(&b, "reported a wait-for cycle after %s (fast mode)", roundDuration(in.cycleAt))
		} else {
			fmt.Fprintf(&b, "did not finish within %s", in.cfg.Deadline)
			if res.Cycle != nil {
				fmt.Fprintf(&b, " (it reported a wait-for cycle after %s)", roundDuration(in.cycleAt))
			}
		}
		switch {
		case in.quit.exited && in.quit.gotDump:
			b.WriteString("; ended after SIGQUIT (dump received)")
		case in.quit.exited:
			b.WriteString("; ended after SIGQUIT")
		case in.quit.gotDump:
			b.WriteString("; killed after SIGQUIT (dump received)")
		default:
			fmt.Fprintf(&b, "; killed after SIGQUIT (no dump within the %s grace period)", roundDuration(in.grace))
		}
		return Hang, b.String()
	case stopContext:
		return Interrupted, fmt.Sprintf("interrupted (%v) after %s; killed at once", context.Cause(in.ctx), roundDuration(res.Duration))
	case stopKillAll:
		return Interrupted, fmt.Sprintf("interrupted by KillAll after %s; killed at once", roundDuration(res.Duration))
	}
	switch {
	case !in.stateKnown:
		return Failed, fmt.Sprintf("could not be waited for: %v", in.waitErr)
	case res.Signal != "":
		return Crash, fmt.Sprintf("killed by %s (signal %d)", res.Signal, res.SignalNumber)
	case res.ExitCode != 0:
		return Failed, fmt.Sprintf("exited with status %d", res.ExitCode)
	case in.stdoutUnseen:
		return NoMarker, fmt.Sprintf("exited with status 0, but its stdout is the caller's file, so the marker line %q could not be checked", in.marker)
	case !res.MarkerSeen:
		return NoMarker, fmt.Sprintf("exited with status 0 without printing the marker line %q", in.marker)
	}
	return Completed, fmt.Sprintf("exited with status 0 after printing %q", in.marker)
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// recorder keeps the telemetry in order and tells the watcher about cycles
// and dumps.
type recorder struct {
	started   time.Time
	onEvent   func(Event)
	cycleSeen chan struct{} // closed at the first cycle
	dumpSeen  chan struct{} // one token per dump, at most one pending

	mu      sync.Mutex
	events  []Event
	cycle   int // index of the first cycle, -1 if none
	dump    int // index of the last dump, -1 if none
	cycleAt time.Duration
}

func newRecorder(started time.Time, onEvent func(Event)) *recorder {
	return &recorder{
		started: started, onEvent: onEvent,
		cycleSeen: make(chan struct{}), dumpSeen: make(chan struct{}, 1),
		cycle: -1, dump: -1,
	}
}

func (r *recorder) add(ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	switch ev.Ev {
	case KindCycle:
		if r.cycle < 0 {
			r.cycle, r.cycleAt = len(r.events)-1, time.Since(r.started)
			close(r.cycleSeen)
		}
	case KindDump:
		r.dump = len(r.events) - 1
		select {
		case r.dumpSeen <- struct{}{}:
		default:
		}
	}
	r.mu.Unlock()
	if r.onEvent != nil {
		r.onEvent(ev)
	}
}

func (r *recorder) snapshot() (events []Event, cycle, dump *Event, cycleAt time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	events = append([]Event(nil), r.events...)
	if r.cycle >= 0 {
		ev := events[r.cycle]
		cycle = &ev
	}
	if r.dump >= 0 {
		ev := events[r.dump]
		dump = &ev
	}
	return events, cycle, dump, r.cycleAt
}

// plumbing is the pipes Run puts between itself and the child.
type plumbing struct {
	telemetry, telemetryChild *os.File
	stdout, stderr            *streamCapture // nil when the caller's file goes to the child as is
}

// plumb wires cmd for Run: telemetry on fd 3, captured or tee'd outputs, a
// process group of its own, the death signal and WaitDelay.
func plumb(cmd *exec.Cmd, marker string, grace time.Duration) (*plumbing, error) {
	p := &plumbing{}
	var err error
	if p.telemetry, p.telemetryChild, err = os.Pipe(); err != nil {
		return nil, err
	}
	if _, isFile := cmd.Stdout.(*os.File); !isFile {
		if p.stdout, err = newStreamCapture(cmd.Stdout, cmd.Stdout == nil, newMarkerScanner(marker)); err != nil {
			p.closeAll()
			return nil, err
		}
	}
	_, stderrIsFile := cmd.Stderr.(*os.File)
	shareStdout := cmd.Stderr != nil && !stderrIsFile && sameWriter(cmd.Stdout, cmd.Stderr)
	if !stderrIsFile && !shareStdout {
		if p.stderr, err = newStreamCapture(cmd.Stderr, cmd.Stderr == nil, nil); err != nil {
			p.closeAll()
			return nil, err
		}
	}
	if p.stdout != nil {
		cmd.Stdout = p.stdout.child
	}
	switch {
	case shareStdout:
		// One pipe for both keeps their interleaving, as os/exec does.
		cmd.Stderr = p.stdout.child
	case p.stderr != nil:
		cmd.Stderr = p.stderr.child
	}
	cmd.ExtraFiles = append([]*os.File{p.telemetryChild}, cmd.ExtraFiles...)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, TelemetryFDEnv+"=3")

	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		copied := *cmd.SysProcAttr // the caller's struct may be shared
		attr = &copied
	}
	if !attr.Setsid { // a new session is a new group already
		attr.Setpgid, attr.Pgid = true, 0
	}
	setDeathSignal(attr)
	cmd.SysProcAttr = attr
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = grace // bounds os/exec's own stdin copying
	}
	return p, nil
}

func (p *plumbing) captures() []*streamCapture {
	var list []*streamCapture
	for _, s := range []*streamCapture{p.stdout, p.stderr} {
		if s != nil {
			list = append(list, s)
		}
	}
	return list
}

// closeChildEnds closes the parent's copies of the child's pipe ends, so that
// EOF comes when the child's group lets go of them.
func (p *plumbing) closeChildEnds() {
	_ = p.telemetryChild.Close()
	for _, s := range p.captures() {
		_ = s.child.Close()
	}
}

func (p *plumbing) closeAll() {
	p.closeChildEnds()
	_ = p.telemetry.Close()
	for _, s := range p.captures() {
		_ = s.pipe.Close()
	}
}

// drain waits until every pipe reached EOF or until until, then closes the
// read ends: a process that escaped the group may hold a write end forever.
func (p *plumbing) drain(telemetryDone <-chan struct{}, until time.Time) {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	pending := []<-chan struct{}{telemetryDone}
	for _, s := range p.captures() {
		pending = append(pending, s.finished)
	}
	timedOut := false
	for _, ch := range pending {
		if timedOut {
			break
		}
		select {
		case <-ch:
		case <-timer.C:
			timedOut = true
		}
	}
	for _, f := range append([]*os.File{p.telemetry}, pipesOf(p.captures())...) {
		_ = f.SetReadDeadline(time.Now()) // wakes a blocked Read
		_ = f.Close()
	}
	// The telemetry reader ends at once now (unless OnEvent blocks), and
	// OnEvent must not be called after Run returns.
	<-telemetryDone
	// A copier can still be stuck in the caller's writer; give it a moment,
	// then leave it: it no longer records anything for the Result.
	grace := time.NewTimer(drainAllowance(0))
	defer grace.Stop()
	for _, s := range p.captures() {
		select {
		case <-s.finished:
		case <-grace.C:
			return
		}
	}
}

func pipesOf(captures []*streamCapture) []*os.File {
	files := make([]*os.File, 0, len(captures))
	for _, s := range captures {
		files = append(files, s.pipe)
	}
	return files
}

// sameWriter reports whether a and b are the same writer, without panicking
// on writers that are not comparable.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
