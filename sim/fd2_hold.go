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
// write call is left: the last one to end releases the reader
// (MarkFD2Release) and returns once it has read what the pipe holds
// (endWriting). Before, the reader read as bytes
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

// endWriting ends t's write call on a pipe the parent drains. The last
// write call on a held pipe (none other under way or waiting) ends the hold
// itself and returns once the parent's reader has read what the pipe holds,
// or is stalled (releaseDrained): the next write or room check finds the
// pipe as the model left it. Ended by parentReads as it next looked, the
// hold outlived the write call or not, and a write right after it found the
// bytes the freed reader had read by then gone or not (random search:
// merged, nightly seeds 868199431 and 195861052, another thread's flush
// right after a blocked one went through, OK, or blocked and held the
// reader again, LOST; docs/TRUST.md, "The end of a hold").
func (f *FD2) endWriting(t *Thread) {
	g, r := f.g, f.room
	g.mu.Lock()
	r.writing--
	if r.trying == t {
		r.trying = nil
	}
	last := r.idleHoldLocked()
	g.changedLocked()
	g.mu.Unlock()
	if last {
		f.releaseDrained()
	}
}

// idleHoldLocked reports whether the reader is held, no write call is
// left on the pipe, and no held read is asked and unanswered: the hold may
// end now. A write call that ends while a held read is under way (a signal
// ended it) leaves the hold to that read's end (parentReads): the read may
// wait for a stall, which may wait for this thread's next write (I2), so
// the write call must not wait for the reader behind it. Graph mutex held.
func (r *PipeRoom) idleHoldLocked() bool {
	return r.held && !r.heldRead && r.writing == 0 && len(r.queue) == 0 && r.trying == nil
}

// releaseDrained ends the hold if still no write call is left and asks the
// reader, reading as bytes arrive again, to read what the pipe holds
// (MarkFD2Read), returning once the parent answered: one step against a
// later hold's start (holdMu).
func (f *FD2) releaseDrained() {
	f.holdMu.Lock()
	defer f.holdMu.Unlock()
	if f.releaseLocked() {
		f.ask(telemetry.MarkFD2Read)
	}
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
	hold := 0
	return f.awaitDrainerRead(t, interruptible, func() {
		f.room.held = true
		f.room.holds++
		hold = f.room.holds
	}, func() {
		defer f.holdMu.Unlock()
		if !f.ask(telemetry.MarkFD2Hold) {
			f.g.mu.Lock()
			f.room.held = false
			f.g.changedLocked()
			f.g.mu.Unlock()
			return
		}
		go f.parentReads(hold)
	})
}

// parentReads asks the parent for each read once nothing else in the model
// moves (onlyTheParentMovesLocked), and hands the room it made to the
// waiting writers (Drained); it ends with its hold, which the last write
// call on the pipe ends (endWriting).
func (f *FD2) parentReads(hold int) {
	g, r := f.g, f.room
	for {
		over := false
		g.WaitUntil(func() bool {
			if !r.held || r.holds != hold {
				over = true
				return true
			}
			if r.sigintsDue > 0 || !g.onlyTheParentMovesLocked(true) {
				return false
			}
			n, err := pipes.Queued(2)
			r.heldRead = err != nil || n > 0 || len(r.queue) > 0
			return r.heldRead
		})
		if over {
			return
		}
		f.ask(telemetry.MarkFD2ReadHeld)
		g.mu.Lock()
		r.heldRead = false
		idle := r.idleHoldLocked()
		g.changedLocked()
		g.mu.Unlock()
		if idle {
			// The last write call ended during the read (idleHoldLocked).
			f.releaseDrained()
			continue
		}
		f.Drained(nil) // the parent's read: no drainer thread of ours
	}
}

// releaseLocked ends the hold if still no write call is left (holdMu
// held): the release mark goes out before any later hold's.
func (f *FD2) releaseLocked() bool {
	g, r := f.g, f.room
	g.mu.Lock()
	if !r.idleHoldLocked() {
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
// parent's read lets in"). It also comes once the writers whose turn a
// read has made (Drained) have taken it: the room a read frees is theirs
// first. A writer whose write(2) ended in its turn and went on with the
// GIL otherwise met the room of the next writer's turn taken or not
// (random search: adaptive, macOS, seed 93194 of the determinism
// measurement: HANG or OK; docs/TRUST.md, "A turn taken after the
// GIL's holder wrote").
func (f *FD2) AwaitInFlight(t *Thread) {
	if t == nil {
		return
	}
	g := f.g
	g.mu.Lock()
	if t.in.GIL.OwnerLocked() == t {
		g.parkLocked(t, func() bool { return !g.inFlightUnwaitingLocked(t) && !f.turnDueLocked(t) })
	}
	g.mu.Unlock()
}

// turnDueLocked reports whether a writer other than t has its turn at the
// room a read made, or will take it next (staleWaiterLocked). Graph mutex
// held.
func (f *FD2) turnDueLocked(t *Thread) bool {
	if r := f.room.trying; r != nil && r != t {
		return true
	}
	w := f.staleWaiterLocked()
	return w != nil && w != t
}

// inFlightUnwaitingLocked reports whether a thread other than self dropped
// the GIL for native code that ends by itself and waits for nothing yet
// (not even for room on fd 2, which the release barrier does not take for
// settled). Graph mutex held.
func (g *Graph) inFlightUnwaitingLocked(self *Thread) bool {
	for _, o := range g.threads {
		if o != self && o.released && !o.ended && o.waiting == nil && o.parked == nil {
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
