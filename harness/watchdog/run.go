package watchdog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"logjam/signals"
	"logjam/telemetry"
)

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

	rec := newRecorder(started, cfg.OnEvent, cfg.Blocked)
	telemetryDone := make(chan struct{})
	go func() {
		defer close(telemetryDone)
		telemetry.Read(p.telemetry, rec.add)
	}()
	for _, s := range p.captures() {
		go s.copy()
	}

	cause, waitErr, exited, starved := watch(ctx, cfg, group, rec, waited)
	stoppedAt := time.Now()
	res := &Result{Pid: pid, Command: command, ExitCode: -1}
	var quit quitOutcome
	switch cause {
	case stopDeadline, stopCycle, stopBlocked:
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
	if cause == stopDeadline || cause == stopCycle || cause == stopBlocked {
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
		cycleAt: cycleAt, blockedAt: rec.blockedWhen(), quit: quit, starved: starved,
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
	stopBlocked                   // Fast mode and the child said it can only wait (Config.Blocked)
)

// cpuWaitOf is cpuWait; a test replaces it.
var cpuWaitOf = cpuWait

// parentBaselineEvery is how old the parent's own CPU wait may be when a
// child's start takes it as its baseline: reading it lists and reads every
// thread of the parent (/proc/self/task), which at every start was a
// thirtieth of random search's CPU; many children start within this
// window. A baseline read earlier only adds the parent's wait of those
// milliseconds to the child's time (in its favour, at its deadline).
const parentBaselineEvery = 20 * time.Millisecond

// parentBaseline is the parent's CPU wait as of at most
// parentBaselineEvery ago; a test replaces it with a fresh read.
var parentBaseline = func() func() (time.Duration, bool) {
	var mu sync.Mutex
	var at time.Time
	var d time.Duration
	var ok bool
	return func() (time.Duration, bool) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); at.IsZero() || now.Sub(at) >= parentBaselineEvery {
			d, ok = cpuWaitOf(os.Getpid())
			at = now
		}
		return d, ok
	}
}()

// MaxStarvedShare bounds how far the deadline moves for the time the child
// waited for a CPU: at most this many deadlines more. One: a stuck Go child
// still wakes (the runtime's own threads), and on a machine at load 70 its
// threads' run-queue delay, summed, grew faster than the clock.
const MaxStarvedShare = 1

// watch waits for the first thing that ends the run. The deadline counts
// the time the child could run: when it passes, the time the child's
// threads spent runnable but waiting for a CPU meanwhile (a loaded machine,
// a nice'd run) is added and the wait goes on, at most MaxStarvedShare
// deadlines more. So whether a slow run is a HANG does not depend on the
// machine's load, and a child that is really stuck (its threads asleep)
// accrues no such time and ends at its deadline. The parent's own wait for
// a CPU counts too: a child that waits for the parent (a stalled reader's
// answer, a signal it asked for) is held up by a starved parent while it
// sleeps (a finishing child, not a stuck one, was called HANG beside a CI
// at a higher priority; TestChildOfAStarvedParentGetsTheTimeTheParentWaited
// pins it). starved is the time added.
func watch(ctx context.Context, cfg Config, group *liveGroup, rec *recorder, waited <-chan error) (cause stopCause, waitErr error, exited bool, starved time.Duration) {
	deadline := time.NewTimer(cfg.Deadline)
	defer deadline.Stop()
	self := os.Getpid()
	cpuWaits := func() (time.Duration, bool) {
		child, ok := cpuWaitOf(group.pgid)
		parent, pok := cpuWaitOf(self)
		return child + parent, ok || pok
	}
	// The baseline: the parent's wait so far (parentBaseline: as of a few
	// milliseconds ago at most), and none for the child, just
	// forked, whose threads have waited for no CPU yet (a few microseconds
	// at most, counted in its favour). Reading its /proc/PID/task here made
	// dentries the kernel walked again to drop them when the child was
	// reaped (d_walk: 2% of a matrix's CPU), for every child, when only a
	// child still running at its deadline is ever looked at again.
	counted, _ := parentBaseline()
	cycleSeen, blockedSeen := rec.cycleSeen, rec.blockedSeen
	for cause == stopNone && !exited {
		select {
		case waitErr = <-waited:
			exited = true
		case <-cycleSeen:
			cycleSeen = nil // strict mode: noted once, keep waiting
			if cfg.Mode == Fast {
				cause = stopCycle
			}
		case <-blockedSeen:
			blockedSeen = nil // strict mode: noted once, keep waiting
			if cfg.Mode == Fast {
				cause = stopBlocked
			}
		case <-deadline.C:
			if w, ok := cpuWaits(); ok && w-counted >= time.Millisecond && starved < MaxStarvedShare*cfg.Deadline {
				more := min(w-counted, MaxStarvedShare*cfg.Deadline-starved)
				counted, starved = w, starved+more
				deadline.Reset(more)
				continue
			}
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
	return cause, waitErr, exited, starved
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
// only a process that left the group can make Run wait this long; a pipe
// still holding what the group wrote is read on past it (drain).
func drainAllowance(grace time.Duration) time.Duration {
	return min(max(grace/4, 250*time.Millisecond), time.Second)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
