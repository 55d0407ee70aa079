package sim

import (
	"logjam/pipes"
	"logjam/telemetry"
)

// A write(2) on a pipe the parent drains that finds no room holds the
// parent's reader (MarkFD2Hold): from then on the parent reads only when
// nothing in the model moves but its read (parentReads), and the room each
// read frees goes to the waiting writers in turns, in the order they began
// to wait (waitDrainerRead, as behind an in-process forwarder), until no
// write call is left (MarkFD2Release). Before, the reader read as bytes
// arrived, so where another thread's line landed inside a blocked write
// larger than PIPE_BUF, or whether a room check found room beside it, was
// the reader's pace (random search: merged, nightly seeds 17646382 and
// 257627587, LOST or OK; docs/TRUST.md, "Whose bytes the parent's read lets
// in").

// holdable reports whether fd 2 is a pipe the parent drains whose reader
// answers the child's marks: the reads can be the model's events.
func (f *FD2) holdable() bool {
	if f.Kind != FDPipe || !f.readerAcks || !f.tel.Enabled() {
		return false
	}
	return !f.inProcessDrainer()
}

// Held reports whether the parent's reads are the model's events now.
func (f *FD2) Held() bool {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return f.room.held
}

// HeldBusy reports whether, the reader held, a thread other than t has a
// write under way or waits for a read: the room is theirs, so t's
// non-blocking write or room check finds none.
func (f *FD2) HeldBusy(t *Thread) bool {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return f.heldBusyLocked(t)
}

func (f *FD2) heldBusyLocked(t *Thread) bool {
	r := f.room
	if !r.held {
		return false
	}
	if r.trying != nil && r.trying != t {
		return true
	}
	for _, q := range r.queue {
		if q != t {
			return true
		}
	}
	return r.writing > 0
}

// mustQueue reports whether t's write call, the reader held, must wait for
// its turn: another writer waits for a read or has the turn.
func (f *FD2) mustQueue(t *Thread) bool {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	r := f.room
	if !r.held || r.trying == t {
		return false
	}
	return r.trying != nil || len(r.queue) > 0
}

func (r *PipeRoom) readsAreEventsLocked() bool { return r.drainer != nil || r.held }

func (f *FD2) beginWriting() {
	f.g.mu.Lock()
	f.room.writing++
	f.g.changedLocked()
	f.g.mu.Unlock()
}

func (f *FD2) endWriting() {
	f.g.mu.Lock()
	f.room.writing--
	f.g.changedLocked()
	f.g.mu.Unlock()
}

// holdAndWait is t's wait after its write(2) found the pipe full: if the
// parent's reads are not the model's events yet, they are from this write
// on (held, and t first in the queue, in one step), and only then is the
// reader asked to hold (MarkFD2Hold) and parentReads started; then t waits
// for its turn as any writer behind a held reader does. Before, t queued
// only once the parent had answered the hold: meanwhile another thread's
// line went straight into the pipe or queued behind t as that round trip
// fell (random search: merged, nightly seed 111274240, LOST or DOUBLEINT;
// docs/TRUST.md, "Whose bytes the parent's read lets in").
func (f *FD2) holdAndWait(t *Thread, interruptible bool) (woke bool) {
	if interruptible && f.wakePending() {
		return true
	}
	f.holdMu.Lock()
	if f.Held() {
		f.holdMu.Unlock()
		return f.awaitDrainerRead(t, interruptible, nil, nil)
	}
	return f.awaitDrainerRead(t, interruptible, func() {
		f.room.held = true
	}, func() {
		defer f.holdMu.Unlock()
		if !f.ask(telemetry.MarkFD2Hold) {
			f.g.mu.Lock()
			f.room.held = false
			f.g.changedLocked()
			f.g.mu.Unlock()
			return
		}
		go f.parentReads()
	})
}

// parentReads asks the parent for each read once nothing else in the model
// moves (onlyTheParentMovesLocked), and hands the room it made to the
// waiting writers (Drained); it ends the hold once no write call is
// left on the pipe.
func (f *FD2) parentReads() {
	g, r := f.g, f.room
	for {
		idle := false
		g.WaitUntil(func() bool {
			if r.writing == 0 && len(r.queue) == 0 && r.trying == nil {
				idle = true
				return true
			}
			if r.sigintsDue > 0 || !g.onlyTheParentMovesLocked(true) {
				return false
			}
			n, err := pipes.Queued(2)
			return err != nil || n > 0 || len(r.queue) > 0
		})
		if idle && f.release() {
			return
		}
		if idle {
			continue
		}
		f.ask(telemetry.MarkFD2ReadHeld)
		f.Drained(nil) // the parent's read: no drainer thread of ours
	}
}

// release ends the hold if still no write call is left; the release mark
// goes out before any later hold's (holdMu).
func (f *FD2) release() bool {
	f.holdMu.Lock()
	defer f.holdMu.Unlock()
	g, r := f.g, f.room
	g.mu.Lock()
	if r.writing > 0 || len(r.queue) > 0 || r.trying != nil {
		g.mu.Unlock()
		return false
	}
	r.held = false
	g.changedLocked()
	g.mu.Unlock()
	f.tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Release})
	return true
}

// AwaitInFlight is the start of a write to fd 2 (a write(2), a
// non-blocking try, a policy's room check) by the GIL's holder: it comes
// once every other thread that dropped the GIL for native code (a FileIO write(2), a released
// flush) has reached its next wait (for room on fd 2, a lock, the GIL) or
// ended. The holder got the GIL from such a thread, or past it; without
// this, whether that thread's write(2) found the pipe before or after the
// holder's lines was the scheduler's (random search: merged, nightly seed
// 111274240, a flush that drops the GIL and another thread's lines logged
// with it held: LOST or DOUBLEINT; docs/TRUST.md, "Whose bytes the
// parent's read lets in").
func (f *FD2) AwaitInFlight(t *Thread) {
	if t == nil {
		return
	}
	g := f.g
	g.mu.Lock()
	if t.in.GIL.OwnerLocked() == t {
		g.parkLocked(t, func() bool { return !g.inFlightUnwaitingLocked(t) })
	}
	g.mu.Unlock()
}

// inFlightUnwaitingLocked reports whether a thread other than self dropped
// the GIL for native code that ends by itself and waits for nothing yet
// (not even for room on fd 2, which the release barrier does not take for
// settled). Graph mutex held.
func (g *Graph) inFlightUnwaitingLocked(self *Thread) bool {
	for _, o := range g.threads {
		if o != self && !o.native && o.released && !o.ended && o.waiting == nil && o.parked == nil {
			return true
		}
	}
	return false
}

// SIGINTDue says that an observer of the program may send a SIGINT on a
// blocked write and has not yet decided, or its SIGINT has not yet reached
// the model; SIGINTSettled that it is done. Meanwhile the held reader does
// not read (parentReads): whether a read came before the SIGINT ended the
// write, and so whether the hold ended with it, was the scheduler's
// (random search: merged, nightly seed 111274240).
func (f *FD2) SIGINTDue() { f.addSIGINTsDue(1) }

// SIGINTSettled ends a SIGINTDue.
func (f *FD2) SIGINTSettled() { f.addSIGINTsDue(-1) }

func (f *FD2) addSIGINTsDue(d int) {
	f.g.mu.Lock()
	f.room.sigintsDue += d
	f.g.changedLocked()
	f.g.mu.Unlock()
}
