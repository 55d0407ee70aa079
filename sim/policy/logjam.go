package policy

// Over 400 lines on purpose: logjam's Emit, Exit, fatal path and at-fork
// handlers share its keep and its calls' state; together they are the
// model of logjam.hpp (docs/SINK.md), read side by side with it.

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"logjam/pipes"
	"logjam/sim"
	"logjam/sim/keep"
	"logjam/telemetry"
)

// logjamSink is ours: merged, plus recovery after a stall, no blocking
// write with the GIL held outside a call, the flush's exception re-raised
// as itself, and a counted note for a daemon's unwritten lines; fd-2
// writes under the stdio lock, taken with the GIL released or only tried
// (docs/CONTRACT.md: the findings of random search).
type logjamSink struct {
	*adaptiveSink

	// mu is the lock of the process-wide keep (the header's mu_): a lock of
	// the wait-for graph, so that a fork that leaves it held in the child
	// is a wait the graph names (ForkAware).
	mu      *sim.Lock
	outside keep.Buffer // lines logged outside a call while fd 2 had no room or sys.stderr was replaced
	lostN   int         // a daemon's lines that could not be written
	lostB   int

	// flushing: flushes that have taken outside's lines and not yet written
	// them all; a line logged outside a call meanwhile waits behind them.
	flushing int

	// added counts the lines ever kept in outside; taken, the most of them
	// a finished flush had taken; written, that count once no flush was in
	// flight; lastAdded, each thread's last. A
	// thread whose last is above written has lines still waiting there
	// (behind).
	added, taken, written uint64
	lastAdded             map[*sim.Thread]uint64
	// out: fd 2 as installed, and the forwarder's pipe it may have become
	// (logjam_outliving.go).
	out *outliving
}

func newLogjamSink(k *kit) *logjamSink {
	r := mergedRules
	r.name = "logjam"
	k.retryEINTR = true
	p := &logjamSink{adaptiveSink: &adaptiveSink{kit: k, rules: r}, out: newOutliving(k.rt.In.Stderr()), mu: k.rt.G.NewLock("logjam's keep lock")}
	k.rt.In.AtTeardown(p.daemonNote)
	k.rt.In.AtExit(func(t *sim.Thread) {
		// An exception in an atexit callback is reported, not lost.
		if err := p.flushOutside(t, "at exit"); err != nil {
			k.rt.Tel.Emit(telemetry.Exception{Thread: t.Name, Call: "atexit", Type: err.Type, Text: err.Msg})
		}
	})
	return p
}

// OwnLocks: the keep's lock is the one lock the sink owns (ForkAware).
func (p *logjamSink) OwnLocks() []*sim.Lock { return []*sim.Lock{p.mu} }

// BeforeFork, AfterForkParent and ForkChild are the at-fork rule, the
// header's before_fork, after_fork_parent and after_fork_child: the keep's
// lock held by the forking thread across the fork (the prepare handler
// waits for a thread that holds it to let go), so no other thread holds
// it in the child; the child's copy of the lines kept process-wide dropped,
// as the parent writes them. Row D5 pins the lock's part
// (suites/deadlock), TestAForkedChildNeitherWaitsForTheKeepNorWritesItAgain
// both parts.
func (p *logjamSink) BeforeFork(t *sim.Thread) { p.mu.Acquire(t) }

// AfterForkParent lets the keep's lock go in the parent.
func (p *logjamSink) AfterForkParent(t *sim.Thread) { p.mu.Release(t) }

// ForkChild is the child's copy: its own kit (each thread's call state;
// the forking thread, outside any call, keeps nothing), the keep's lock as
// the fork left it, what fd 2 was at install (its forwarder scan the
// child's own), the process-wide keep and its counts as the child's
// handler leaves them. It registers no exit hook: the child ends with
// os._exit.
func (p *logjamSink) ForkChild(f *sim.ForkView) (sim.Policy, func(c *sim.Thread)) {
	// The forking thread holds the keep's lock (BeforeFork): the copy is
	// consistent.
	k := &kit{rt: p.rt, retryEINTR: p.retryEINTR}
	c := &logjamSink{adaptiveSink: &adaptiveSink{kit: k, rules: p.rules}, mu: f.Copy(p.mu),
		out:     &outliving{installed: p.out.installed, installedOK: p.out.installedOK, reader: -1},
		outside: p.outside.Clone(), lostN: p.lostN, lostB: p.lostB, flushing: p.flushing,
		added: p.added, taken: p.taken, written: p.written}
	return c, func(t *sim.Thread) {
		// The child's only thread: its fields are its own.
		c.outside = keep.Buffer{}
		c.lostN, c.lostB = 0, 0 // the parent's daemons' note is the parent's to write
		c.flushing = 0
		c.written = c.added // nothing of the child's is behind the parent's lines
		if c.mu.HeldBy(t) { // taken by the prepare handler
			c.mu.Release(t)
		}
	}
}

// Emit is merged's, except that a line goes to fd 2 only when the stdio
// lock is free as well as fd 2 has room: a thread holding the GIL never
// waits for a writer that may itself wait for a GIL waiter (a flush blocked
// on a forwarder's pipe), and never lands inside another writer's line.
// Outside a call, with sys.stderr replaced, a line waits for the next
// outermost exit (or the exit) to go to it, never to fd 2.
func (p *logjamSink) Emit(t *sim.Thread, l sim.Line) {
	c := p.call(t)
	switch {
	case l.Level == sim.Fatal:
		p.fatal(t, l)
	case t.InCall() && c.direct:
		if p.tryDirect(t, l, RoomWait, "direct: fd 2 took it") {
			return
		}
		c.direct, c.stalled = false, true
		p.keep(t, l, "no room on fd 2 (or another writer) for 100 ms")
	case t.InCall() && c.stalled: // re-check with no wait; on room, catch up and go direct
		// On a pipe the check is a try of the oldest kept line, not poll:
		// a one-page pipe holding anything is never writable to poll, yet
		// takes a line that fits (pinned by suites/random's entry "seed
		// 4050971: logjam OK (a stalled call re-checks a pipe by trying its
		// oldest kept line)").
		pipe := p.rt.FD2.Kind == sim.FDPipe
		if (pipe || p.roomNow(t)) && p.rt.Stdio.TryAcquire(t) {
			first := RoomWait
			if pipe {
				first = 0
			}
			if p.catchUpLocked(t, c, first) {
				n := p.writeBounded(t, l.Bytes, RoomWait)
				if 0 < n && n < len(l.Bytes) {
					p.rt.FD2.WriteAll(t, l.Bytes[n:]) // never half a line (tryDirect)
					n = len(l.Bytes)
				}
				p.rt.Stdio.Release(t)
				if n == 0 {
					p.keep(t, l, "fd 2 still stalled")
					return
				}
				c.direct, c.stalled = true, false
				p.rt.Route(t, l, "fd2", "direct again after a stall")
				return
			}
			p.rt.Stdio.Release(t)
		}
		p.keep(t, l, "fd 2 still stalled")
	case t.InCall():
		p.keep(t, l, "sys.stderr replaced, or this thread's earlier lines wait in the process-wide keep")
	default:
		wait := RoomWait
		if t.HoldsGIL() {
			wait = 0 // never block while holding the GIL
		}
		// Lines already kept process-wide go first, those a flush has
		// taken and not yet written too: a later line never overtakes them
		// on fd 2 (the ledger's order rule; random search found a thread's
		// outside lines REORDERED once room came back between two of them).
		// A flush lets the GIL go before it takes the stdio lock: had its
		// lines stopped counting when taken, whether this line or the
		// flush got the stdio lock first would be the scheduler's.
		p.mu.Acquire(t)
		backlog := p.outside.Count() > 0 || p.flushing > 0
		p.mu.Release(t)
		if !backlog && !p.rt.In.StderrReplaced() && p.tryDirect(t, l, wait, "outside a call: fd 2 took it") {
			return
		}
		p.mu.Acquire(t)
		p.outside.Add(l.Bytes)
		p.added++
		if p.lastAdded == nil {
			p.lastAdded = map[*sim.Thread]uint64{}
		}
		p.lastAdded[t] = p.added
		p.rt.CrashPoint(t) // row F10: a crash handler may run here, the keep's lock held
		p.mu.Release(t)
		p.rt.Route(t, l, "kept", "outside a call, sys.stderr replaced or no room: kept process-wide")
	}
}

// fatal is the fatal path (docs/CONTRACT.md, "Fatal and abort with several
// threads"): the lines kept process-wide (any thread's, logged outside a
// call before the fatal line), then the call's kept lines, each while fd 2
// has room, then the fatal line. Nothing runs after the abort, so these
// are the last lines the sink can save. It holds the GIL and a backend
// lock: it waits for no other thread but through the stdio lock, which no
// thread holds while it waits for the GIL (writeReleased lets it go
// first), and never for a flush in flight (one that took process-wide
// lines re-takes the GIL before it counts itself done).
func (p *logjamSink) fatal(t *sim.Thread, l sim.Line) {
	// A crash handler may run on the thread that holds the keep's lock
	// (row F10): never wait for it then; the keep is whole (the handler
	// ran after its change), so its lines go too.
	mine := p.mu.HeldBy(t)
	if !mine {
		p.mu.Acquire(t)
	}
	note, lines := p.outside.Take()
	if !mine {
		p.mu.Release(t)
	}
	tk := taken{note: note, lines: lines}
	if t.InCall() {
		tk = tk.then(p.take(t))
	}
	if rd := p.out.forwarderReader(); rd >= 0 {
		if out := p.out.copyOf(rd); out >= 0 {
			p.rescue(t, l, tk, rd, out)
			return
		}
	}
	if !tk.empty() {
		// A pipe: each line tried within the bound (writeEachBounded); a
		// terminal or a file: written, blocking, as before (a stalled
		// terminal's reader reads again once a write waits; a bounded try
		// gave up first or not as the clock went: pinned by suites/random's
		// entry "seed 6052064: logjam OK").
		left := 0
		if p.rt.FD2.Kind == sim.FDPipe {
			p.rt.Stdio.Acquire(t)
			left = p.writeEachBounded(t, tk.all(), RoomWait)
			p.rt.Stdio.Release(t)
		} else {
			left, _ = p.directWhileRoom(t, tk, p.rules.careful)
		}
		// Telemetry only: the kept lines this fatal path wrote to fd 2
		// (the oldest first; it stops at the first line fd 2 did not
		// take within the bound), for the ledger's fatal-path rule.
		p.rt.Tel.Emit(telemetry.FatalFlush{Thread: t.Name, Fatal: l.Seq,
			Written: tk.lines[:max(0, len(tk.lines)-left)], Left: left})
	}
	p.directLine(t, l, "fatal line, then abort")
}

// tryDirect writes the line to fd 2 if the stdio lock is free and fd 2
// takes it within wait (writeBounded). A line fd 2 took only part of within
// the bound (a tty's short write; a pipe takes a line of at most PIPE_BUF
// whole or not at all) is finished before the stdio lock is let go: a rest
// kept for later let other threads' lines land inside it (random search).
// A terminal is drained from outside the process, never by a GIL waiter.
func (p *logjamSink) tryDirect(t *sim.Thread, l sim.Line, wait time.Duration, why string) bool {
	if !p.rt.Stdio.TryAcquire(t) {
		return false
	}
	n, errno := p.writeBoundedErr(t, l.Bytes, wait)
	if 0 < n && n < len(l.Bytes) {
		p.rt.FD2.WriteAll(t, l.Bytes[n:])
		why = fmt.Sprintf("fd 2 took %d of %d bytes within the bound; the rest written before any other line", n, len(l.Bytes))
		n = len(l.Bytes)
	}
	if errno != 0 {
		// Refused for good: this line is given up; the next is written as
		// if no write had failed (docs/CONTRACT.md).
		why = fmt.Sprintf("fd 2 refused it (%s): given up", unix.ErrnoName(errno))
	}
	p.rt.Stdio.Release(t)
	if n == 0 {
		return false
	}
	p.rt.Route(t, l, "fd2", why)
	return true
}

// roomNow is the stalled call's re-check, with no wait: a pipe's room
// check, a terminal's POLLOUT (a stalled terminal takes nothing), a file
// always.
func (p *logjamSink) roomNow(t *sim.Thread) bool {
	switch p.rt.FD2.Kind {
	case sim.FDPipe:
		return p.roomCheck(t, 0, true)
	case sim.FDTTY:
		room, _ := pipes.PollWritable(2, 0)
		return room
	}
	return true
}

// catchUpLocked writes the call's kept lines (the note first) as fd 2
// takes them within the room check's bound (writeBounded): holding the
// GIL, it never blocks on fd 2 (a forwarder may have read one chunk of its
// pipe without the GIL, and cannot read another). What does not go out,
// the rest of a line included, is kept again, in order; it reports
// whether everything was written. The stdio lock is held.
func (p *logjamSink) catchUpLocked(t *sim.Thread, c *callState, first time.Duration) bool {
	tk := p.take(t)
	all := tk.all()
	p.rt.Tel.Emit(telemetry.Fallback{Thread: t.Name, Lines: len(tk.lines), Why: "room again after a stall"})
	left := p.writeEachBounded(t, all, first)
	for _, rest := range all[len(all)-left:] {
		c.kept.Add(rest)
	}
	return left == 0
}

// writeEachBounded writes lines, oldest first, each as fd 2 takes it within
// the room check's bound (writeBounded), never half of one (tryDirect), and
// returns how many were left at the first that did not go out; the first
// line's bound is first. A line is tried, not only fd 2 polled: a one-page
// pipe holding anything is never writable to poll, yet takes a line that
// fits (pinned by suites/random's entry "hand-made: logjam OK (the fatal
// path tries each kept line, EAGAIN just before a Fatal abort)"). The
// stdio lock is held.
func (p *logjamSink) writeEachBounded(t *sim.Thread, all [][]byte, first time.Duration) (left int) {
	for i, b := range all {
		wait := RoomWait
		if i == 0 {
			wait = first
		}
		n := p.writeBounded(t, b, wait)
		if 0 < n && n < len(b) {
			p.rt.FD2.WriteAll(t, b[n:])
			n = len(b)
		}
		if n == 0 {
			return len(all) - i
		}
	}
	return 0
}

// writeReleased writes kept lines to fd 2 at an outermost exit (or at
// exit), where no backend lock is held: the GIL is released first, so a
// forwarder that needs it can drain fd 2, and the stdio lock is held, so no
// other line lands inside them. Each write(2) loop counts what it moved and
// writes the rest; EAGAIN waits for room, and a write the kernel refuses
// for good (EPIPE, ENOSPC, EIO) gives up that line only (docs/CONTRACT.md,
// "A write the kernel refuses"). A SIGINT that ends a blocked write (EINTR) loses nothing:
// with runHandlers, the first one runs the handler (the GIL retaken, the
// stdio lock let go meanwhile, between two lines) and its exception is
// returned to be raised after the call; later ones, or all without
// runHandlers, stay pending for the eval loop.
func (p *logjamSink) writeReleased(t *sim.Thread, tk taken, why string, runHandlers bool) *sim.PyErr {
	p.rt.Tel.Emit(telemetry.Fallback{Thread: t.Name, Lines: len(tk.lines), Why: why})
	all := tk.all()
	var raised *sim.PyErr
	t.ReleaseGILNative()
	p.rt.Stdio.Acquire(t)
	for _, b := range all {
	line:
		for len(b) > 0 {
			n, errno := p.rt.FD2.WriteUntilSignal(t, b)
			b = b[n:]
			switch errno {
			case unix.EINTR:
				if runHandlers && raised == nil && n == 0 {
					p.rt.Stdio.Release(t)
					t.AcquireGIL()
					raised = p.rt.In.Signals.Check(t)
					t.ReleaseGILNative()
					p.rt.Stdio.Acquire(t)
				}
			case unix.EAGAIN: // no room: wait for it, as for a full pipe
				p.rt.FD2.WaitRoom(t)
			case 0:
			default: // refused for good (EPIPE, ENOSPC, EIO): this line is given up, not the next
				break line
			}
		}
	}
	p.rt.Stdio.Release(t)
	t.AcquireGIL()
	return raised
}

// flushTo is the flush of kept lines at an outermost exit: to fd 2 as
// writeReleased does while sys.stderr is the original (a Ctrl-C there is
// raised after the call), else a Python write to it; if that raises, the
// lines go to fd 2 as writeReleased does, and the exception is returned to
// be re-raised as itself.
func (p *logjamSink) flushTo(t *sim.Thread, tk taken, why string) *sim.PyErr {
	if !p.rt.In.StderrReplaced() {
		p.rt.Tel.Emit(telemetry.Flush{Thread: t.Name, Lines: len(tk.lines), Note: string(tk.note), To: "fd 2 (sys.stderr is the original)"})
		return p.writeReleased(t, tk, why, true)
	}
	if err := p.flushEscaped(t, tk); err != nil {
		p.writeReleased(t, tk, why+": flush raised "+err.Type, false)
		return err
	}
	return nil
}

func (p *logjamSink) Exit(t *sim.Thread) *sim.PyErr {
	var outErr *sim.PyErr
	var tk taken
	if !t.Daemon && !p.rt.In.StderrReplaced() {
		// One flush for the lines kept process-wide and the call's own,
		// under one hold of the stdio lock. Two let the GIL be re-taken
		// between them, and an abort there (another thread's Fatal line)
		// killed the call's lines, still kept (pinned by suites/random's
		// entry "seed 8004415: logjam OK").
		outside := p.takeOutside(t)
		defer p.flushed(t, outside)
		tk = outside.then(p.take(t))
	} else {
		outErr = p.flushOutside(t, "next outermost exit")
		tk = p.take(t)
	}
	if tk.empty() {
		return outErr
	}
	if p.daemonRule(t) {
		p.daemonDirect(t, tk)
		return outErr
	}
	if t.Daemon {
		// A daemon thread never waits on fd 2: the interpreter may exit
		// under it, and a write in flight dies with the process.
		if !p.rt.In.StderrReplaced() {
			p.daemonDirect(t, tk)
			return outErr
		}
		if err := p.flushEscaped(t, tk); err != nil {
			p.daemonDirect(t, tk)
			return err
		}
		return outErr
	}
	if err := p.flushTo(t, tk, "outermost exit"); err != nil {
		return err // re-raised as itself: the handler ran once
	}
	return outErr
}

// daemonNote writes the left-out note for the daemons' unwritten lines
// when finalization tears the module down: every daemon thread has met its
// fate by then, so the count is final. It goes to sys.stderr if that was
// replaced (falling back to fd 2), else to fd 2; the GIL is held and no
// other thread can run.
func (p *logjamSink) daemonNote(t *sim.Thread) {
	p.mu.Acquire(t)
	n, b := p.lostN, p.lostB
	p.lostN, p.lostB = 0, 0
	p.mu.Release(t)
	if n == 0 {
		return
	}
	tk := taken{note: keep.FormatNote(n, b)}
	if !p.rt.In.StderrReplaced() {
		p.directAll(t, tk, "the daemons' left-out note at teardown")
		return
	}
	if err := p.flushEscaped(t, tk); err != nil {
		p.directAll(t, tk, "the daemons' left-out note at teardown: flush raised "+err.Type)
		// Finalization reports it ("Exception ignored in ..."): not lost.
		p.rt.Tel.Emit(telemetry.Exception{Thread: t.Name, Call: "teardown", Type: err.Type, Text: err.Msg})
	}
}

// daemonDirect writes a daemon's kept lines while fd 2 has room and counts
// the rest for the left-out note written at teardown.
func (p *logjamSink) daemonDirect(t *sim.Thread, tk taken) {
	n, b := p.directWhileRoom(t, tk, true)
	if n > 0 {
		p.mu.Acquire(t)
		p.lostN += n
		p.lostB += b
		p.mu.Release(t)
	}
}

// flushOutside writes the process-wide kept lines (flushTo) and returns
// what the flush raised. A daemon thread leaves them to the next thread or
// the exit: its flush could release the GIL while the interpreter
// finalizes, and a forced unwind from there aborts.
func (p *logjamSink) flushOutside(t *sim.Thread, why string) *sim.PyErr {
	if t.Daemon {
		return nil
	}
	tk := p.takeOutside(t)
	if tk.empty() {
		return nil
	}
	defer p.flushed(t, tk)
	if !t.HoldsGIL() {
		t.AcquireGIL()
		defer t.ReleaseGIL()
	}
	return p.flushTo(t, tk, why)
}

// takeOutside takes the lines kept process-wide for a flush, counted in
// flushing (with the take: a later outside line sees the backlog) until
// flushed(tk) says they are written.
func (p *logjamSink) takeOutside(t *sim.Thread) taken {
	p.mu.Acquire(t)
	defer p.mu.Release(t)
	note, lines := p.outside.Take()
	tk := taken{note: note, lines: lines, upto: p.added}
	if !tk.empty() {
		p.flushing++
	}
	return tk
}

// Enter is adaptive's, except that a thread whose own lines logged outside
// a call still wait in the process-wide keep keeps its call's lines too:
// its outermost exit writes the process-wide lines first, then the call's,
// so its lines reach fd 2 in the order it logged them (a call's line that
// found room went before them: REORDERED; TestALineKeptOutsideACallGoes
// BeforeTheThreadsNextCall).
//
// And on an in-process forwarder's pipe a call that holds the GIL keeps
// its lines: the forwarder cannot drain them before the call lets the GIL
// go, and what it read meanwhile it holds, waiting for the GIL, where a
// Fatal line's rescue cannot reach it (TestACallOnAForwardersPipeKeeps).
func (p *logjamSink) Enter(t *sim.Thread) {
	p.adaptiveSink.Enter(t)
	if p.behind(t) || (t.HoldsGIL() && p.out.forwarderReader() >= 0) {
		p.call(t).direct = false
	}
}

// behind reports whether t has lines in the process-wide keep, or taken
// from it by a flush not yet done.
func (p *logjamSink) behind(t *sim.Thread) bool {
	p.mu.Acquire(t)
	defer p.mu.Release(t)
	return p.lastAdded[t] > p.written
}

func (p *logjamSink) flushed(t *sim.Thread, tk taken) {
	if tk.empty() {
		return
	}
	p.mu.Acquire(t)
	p.flushing--
	p.taken = max(p.taken, tk.upto)
	if p.flushing == 0 {
		p.written = p.taken // only once no flush is in flight: one begun earlier may still be writing older lines
	}
	p.mu.Release(t)
}
