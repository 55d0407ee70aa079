package sim

import (
	"time"

	"golang.org/x/sys/unix"

	"logjam/pipes"
)

// WaitUntilIdle blocks until t waits for something (a lock, the GIL, room
// on fd 2, an event) or has ended: a seeded switch point lets t run up to
// its next wait before going on, whatever the machine's timing.
func (g *Graph) WaitUntilIdle(t *Thread) {
	g.WaitUntil(func() bool { return t.waiting != nil || t.ended })
}

// barrier is what a thread waits for in a barrier of the model (WaitUntilAs):
// a state of the graph, held by nobody.
type barrier struct{ what string }

func (b barrier) ResourceName() string { return "a barrier: " + b.what }
func (b barrier) holders() []*Thread   { return nil }

// WaitUntilAs is WaitUntil for a thread that waits itself: it is shown
// waiting (for the barrier), so the GIL's release barrier and the
// forwarder's read barrier do not wait for it in turn.
func (g *Graph) WaitUntilAs(t *Thread, what string, cond func() bool) {
	g.waitOn(t, barrier{what}, func() { g.WaitUntil(cond) })
}

// WaitUntilAnyWaits blocks until some thread waits for r and returns the
// first such thread (in the order threads were made).
func (g *Graph) WaitUntilAnyWaits(r Resource) *Thread {
	var found *Thread
	g.WaitUntil(func() bool {
		for _, t := range g.threads {
			if !t.ended && t.waiting == r {
				found = t
				return true
			}
		}
		return false
	})
	return found
}

// WaitUntilOnlyASignalMoves blocks until some thread waits for a SIGINT
// and every other thread that has not ended waits for one too or is
// blocked (blockedLocked: for something only the process can end; a
// native thread counts only on its way to the GIL), and returns the first
// thread, in the order threads were made, that waits for a SIGINT. From
// then on nothing in the model moves before the signal arrives, so how
// long the parent takes to send it decides nothing; asked earlier, the
// other threads raced it (random search: merged with a sys.stderr that
// waits for a SIGINT, MISROUTED or DOUBLEINT as the main thread's flush
// came before the signal or after).
func (g *Graph) WaitUntilOnlyASignalMoves() *Thread {
	var found *Thread
	g.WaitUntil(func() bool {
		found = nil
		for _, t := range g.threads {
			switch {
			case t.ended || t.native && !t.queuing && !t.released:
			case t.waiting == Resource(SignalArrival{}):
				if found == nil {
					found = t
				}
			case !t.blockedLocked():
				return false
			}
		}
		return found != nil
	})
	return found
}

// WaitUntilAllBlocked blocks until every thread that has not ended is
// blocked (blockedLocked: it waits for something only the process can end
// that is not there), and at least one has not ended. From then on nothing
// in the model moves again by itself: a program that blocks by design
// (F2) says so to the parent (telemetry.MarkBlocked) without a deadline
// having to pass.
func (g *Graph) WaitUntilAllBlocked() {
	g.WaitUntil(func() bool {
		live := 0
		for _, t := range g.threads {
			if t.ended {
				continue
			}
			if t.parked != nil || !t.blockedLocked() {
				return false
			}
			live++
		}
		return live > 0
	})
}

// parkLocked blocks t (graph mutex held) until cond holds: a wait the
// wait-for graph does not show (the barriers that take a shown wait for
// settled must not), such as the GIL's release barrier for a thread in
// flight. WaitUntilOnlyTheParentMoves counts t as unable to move while
// cond does not hold, so a stall it ends is not waited on forever by a
// thread that waits for another's write to the stalled reader.
func (g *Graph) parkLocked(t *Thread, cond func() bool) {
	if cond() {
		return
	}
	t.parked = cond
	g.changedLocked()
	for !cond() {
		g.cond.Wait()
	}
	t.parked = nil
}

// ParkUntil is parkLocked for a thread of a program: t waits, not shown in
// the wait-for graph, until cond (called with the graph mutex held) holds.
func (g *Graph) ParkUntil(t *Thread, cond func() bool) {
	g.mu.Lock()
	g.parkLocked(t, cond)
	g.mu.Unlock()
}

// WaitUntilOnlyTheParentMoves blocks until nothing in the model moves
// before the parent's reader of fd 2 reads again: every thread that has
// not ended waits for room on fd 2 the parent drains, or is blocked
// (blockedLocked: for something only the process can end; a native thread
// counts only on its way to the GIL), or is parked (parkLocked) on a
// condition that does not hold. A timed stall ends here once its
// time has passed, so what the other threads did meanwhile is the model's
// state, not the machine's pace (docs/TRUST.md, "Random schedules: a seed
// decides the run"). With signalWaits (the SIGINT that ends a wait for
// one is asked only once nothing else moves, WaitUntilOnlyASignalMoves) a
// wait for a SIGINT counts as blocked too, but some thread must then wait
// for the parent's room: the state where none does is that barrier's, so
// the two never hold at once and never race.
func (g *Graph) WaitUntilOnlyTheParentMoves(signalWaits bool) {
	g.WaitUntil(func() bool { return g.OnlyTheReaderMovesLocked(signalWaits) })
}

// OnlyTheReaderMovesLocked is WaitUntilOnlyTheParentMoves's condition
// (nothing moves before the parent's reader reads), for a WaitUntil that
// also ends on something else. Graph mutex held.
func (g *Graph) OnlyTheReaderMovesLocked(signalWaits bool) bool {
	still, room := g.parentMovesAloneLocked(signalWaits)
	return still && (room || !signalWaits)
}

// onlyTheParentMovesLocked reports whether nothing in the model moves
// before the parent acts: its reader reads, or it sends a SIGINT a thread
// waits for (WaitUntilOnlyTheParentMoves, with signal waits). Graph mutex
// held.
func (g *Graph) onlyTheParentMovesLocked(signalWaits bool) bool {
	still, _ := g.parentMovesAloneLocked(signalWaits)
	return still
}

// parentMovesAloneLocked: still, every thread that has not ended waits for
// the parent's room, a SIGINT (with signalWaits), a condition it is parked
// on, or is blocked; room, some thread waits for the parent's room.
func (g *Graph) parentMovesAloneLocked(signalWaits bool) (still, room bool) {
	for _, t := range g.threads {
		r, isRoom := t.waiting.(*PipeRoom)
		switch {
		case t.ended || t.native && !t.queuing && !t.released:
		case isRoom && r.drainer == nil:
			room = true
		case signalWaits && t.waiting == Resource(SignalArrival{}):
		case t.waiting == nil && t.parked != nil && !t.parked():
		case !t.blockedLocked():
			return false, room
		}
	}
	return true, room
}

// WaitDrained is native work that goes on until fd 2 has been drained: a
// pipe until everything written to it was read (FIONREAD at 0), a terminal
// until it takes output again (POLLOUT: its slave's TIOCOUTQ says nothing
// of what the master has not read). The delegate keeps the GIL, as the
// bindings do, and the wait-for graph shows it waiting for whoever drains
// fd 2. A file is always drained.
func (rt *Runtime) WaitDrained(t *Thread) {
	var queued func() (int, error)
	switch rt.FD2.Kind {
	case FDPipe:
		queued = func() (int, error) { return pipes.Queued(2) }
	case FDTTY:
		queued = func() (int, error) {
			fds := []unix.PollFd{{Fd: 2, Events: unix.POLLOUT}}
			if _, err := unix.Poll(fds, 0); err != nil || fds[0].Revents&unix.POLLOUT != 0 {
				return 0, err
			}
			return 1, nil
		}
	default:
		return
	}
	// Drained means no write is under way either: another thread's write
	// that waits for room, or runs with the GIL dropped, puts the rest of
	// its bytes in after an empty moment, and whether they filled a pipe
	// stalled in that moment would be the scheduler's (docs/TRUST.md, "A
	// write under way at a stall"; pinned by suites/random's entry "seed
	// 5051036: merged LOST (a stall begins once no write is under way)").
	drained := func() bool {
		rt.G.mu.Lock()
		writing := rt.othersWritingLocked(t)
		rt.G.mu.Unlock()
		if writing {
			return false
		}
		n, err := queued()
		return err != nil || n == 0
	}
	if drained() {
		// Drained already: no wait is shown, not even for an instant: an
		// observer that acts when a thread waits for room on fd 2 would
		// catch it or not as the scheduler ran it, and a stall would be
		// felt by a check of an empty pipe (no test pins it).
		return
	}
	rt.G.waitOn(t, rt.FD2.Room(), func() {
		for !drained() {
			time.Sleep(time.Millisecond) // a condition polled, not a guessed delay
		}
	})
}

// othersWritingLocked reports whether a thread other than self has a write
// to fd 2 under way that ends by itself: waiting for room the parent
// drains, or running native code with the GIL dropped. Graph mutex held.
func (rt *Runtime) othersWritingLocked(self *Thread) bool {
	for _, o := range rt.G.threads {
		if r, ok := o.waiting.(*PipeRoom); ok && o != self && !o.ended && r.drainer == nil {
			return true
		}
	}
	return rt.G.inFlightUnwaitingLocked(self)
}

// WaitUntilOthersSettled blocks t, shown waiting at a barrier (what),
// until every other thread of the model waits for what only the process
// can give or has ended (Thread.SettledLocked): what t does next (a crash
// handler's Fatal line) meets the model's state, never the pace of a write
// another thread has under way to a pipe the parent drains.
func (g *Graph) WaitUntilOthersSettled(t *Thread, what string) {
	g.WaitUntilAs(t, what, func() bool {
		for _, o := range g.threads {
			if o != t && !o.SettledLocked() {
				return false
			}
		}
		return true
	})
}
