package sim

import (
	"sync"

	"logjam/pipes"
	"logjam/telemetry"
)

// A write(2) on a pipe the parent drains that finds no room holds the
// parent's reader (MarkFD2Hold): from then on the parent reads only when
// nothing in the model moves but its read (parentReads), and the room each
// read frees goes to the waiting writers in turns, in the order they began
// to wait (PipeRoom.waitRead, as behind an in-process forwarder), until no
// write call is left: the last one to end releases the reader
// (MarkFD2Release) and returns once it has read what the pipe holds
// (endWriting). Before, the reader read as bytes
// arrived, so where another thread's line landed inside a blocked write
// larger than PIPE_BUF, or whether a room check found room beside it, was
// the reader's pace (pinned by
// TestARoomCheckBesideAWriteWaitingForTheParentFindsNone; docs/TRUST.md,
// "Whose bytes the parent's read lets in").

// readerHold is the hold of the parent's reader of fd 2's pipe, and the
// way a write call waits for room on a pipe whose reader answers the
// child's marks (roomWait, arranged by FD2.arrangeLocked).
type readerHold struct {
	g      *Graph
	room   *PipeRoom // the writers' turns at the room each read frees
	reader *parentReader
	tel    *telemetry.Writer

	// mu orders a hold's start (MarkFD2Hold) after the last one's end
	// (MarkFD2Release) in what the parent reads, and an ask of the reader
	// (askUnheld) before a hold's start or after its answer.
	mu sync.Mutex
	// held: the parent's reads of its pipe are the model's events now:
	// its reader reads only when parentReads asks, and the writers take
	// the room each read frees in turns, as behind an in-process drainer.
	// writing: threads inside a write call on that pipe. Graph mutex.
	held    bool
	writing int
	// holds: holds begun, so a hold's parentReads ends with its hold;
	// heldRead: parentReads has asked a held read, not yet answered.
	holds    int
	heldRead bool
	// sigintsDue: SIGINTs on a blocked write a program's observer may
	// still send or has sent and not yet seen arrive (FD2.SIGINTDue); a
	// held reader does not read meanwhile. Graph mutex.
	sigintsDue int
}

// isHeld reports whether the parent's reads are the model's events now.
func (h *readerHold) isHeld() bool {
	h.g.mu.Lock()
	defer h.g.mu.Unlock()
	return h.held
}

// Held reports whether the parent's reads are the model's events now.
func (f *FD2) Held() bool { return f.hold.isHeld() }

// HeldBusy reports whether, the reader held, a thread other than t has a
// write under way or waits for a read: the room is theirs, so t's
// non-blocking write or room check finds none.
func (f *FD2) HeldBusy(t *Thread) bool {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return f.hold.busyLocked(t)
}

func (h *readerHold) busyLocked(t *Thread) bool {
	r := h.room
	if !h.held {
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
	return h.writing > 0
}

// askUnheld asks the parent's reader to read what the pipe holds
// (MarkFD2Read, FD2.AskReader) unless it is held. A hold starts before
// this ask or after its answer (mu): asked of a reader held meanwhile, the
// answer (the pipe read empty) would never come, and the proxy's reads
// would wait for this thread: a HANG with no cycle (no test pins it).
func (h *readerHold) askUnheld() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.isHeld() {
		return false
	}
	return h.reader.ask(telemetry.MarkFD2Read)
}

// mustQueue reports whether t's write call, the reader held, must wait for
// its turn: another writer waits for a read or has the turn.
func (h *readerHold) mustQueue(t *Thread) bool {
	h.g.mu.Lock()
	defer h.g.mu.Unlock()
	r := h.room
	if !h.held || r.trying == t {
		return false
	}
	return r.trying != nil || len(r.queue) > 0
}

// beginWriting starts a write call on the pipe.
func (h *readerHold) beginWriting(*Thread) {
	h.g.mu.Lock()
	h.writing++
	h.g.changedLocked()
	h.g.mu.Unlock()
}

// endWriting ends t's write call on a pipe the parent drains. The last
// write call on a held pipe (none other under way or waiting) ends the hold
// itself and returns once the parent's reader has read what the pipe holds,
// or is stalled (releaseDrained): the next write or room check finds the
// pipe as the model left it. Ended by parentReads as it next looked, the
// hold outlived the write call or not, and a write right after it found the
// bytes the freed reader had read by then gone or not (another thread's
// flush right after a blocked one went through, or blocked and held the
// reader again: pinned by TestAWriteRightAfterAHoldMeetsTheDrainedPipe;
// docs/TRUST.md, "The end of a hold").
func (h *readerHold) endWriting(t *Thread) {
	g, r := h.g, h.room
	g.mu.Lock()
	h.writing--
	if r.trying == t {
		r.trying = nil
	}
	last := h.idleLocked()
	g.changedLocked()
	g.mu.Unlock()
	if last {
		h.releaseDrained()
	}
}

// idleLocked reports whether the reader is held, no write call is
// left on the pipe, and no held read is asked and unanswered: the hold may
// end now. A write call that ends while a held read is under way (a signal
// ended it) leaves the hold to that read's end (parentReads): the read may
// wait for a stall, which may wait for this thread's next write (I2), so
// the write call must not wait for the reader behind it. Graph mutex held.
func (h *readerHold) idleLocked() bool {
	r := h.room
	return h.held && !h.heldRead && h.writing == 0 && len(r.queue) == 0 && r.trying == nil
}

// releaseDrained ends the hold if still no write call is left and asks the
// reader, reading as bytes arrive again, to read what the pipe holds
// (MarkFD2Read), returning once the parent answered: one step against a
// later hold's start (mu).
func (h *readerHold) releaseDrained() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.releaseLocked() {
		h.reader.ask(telemetry.MarkFD2Read)
	}
}

// releaseLocked ends the hold if still no write call is left (mu held):
// the release mark goes out before any later hold's.
func (h *readerHold) releaseLocked() bool {
	g := h.g
	g.mu.Lock()
	if !h.idleLocked() {
		g.mu.Unlock()
		return false
	}
	h.held = false
	g.changedLocked()
	g.mu.Unlock()
	h.tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Release})
	return true
}

// wait is t's wait after its write(2) found the pipe full: its turn behind
// the held reader's reads, the reader held first if it is not yet.
func (h *readerHold) wait(t *Thread, _ []byte, interruptible bool) (moved int, woke bool) {
	if h.isHeld() {
		return 0, h.room.waitRead(t, interruptible)
	}
	return 0, h.holdAndWait(t, interruptible)
}

// holdAndWait is t's wait after its write(2) found the pipe full: if the
// parent's reads are not the model's events yet, they are from this write
// on (held, and t first in the queue, in one step), and only then is the
// reader asked to hold (MarkFD2Hold) and parentReads started; then t waits
// for its turn as any writer behind a held reader does. Queued only once
// the parent had answered the hold, t would let another thread's line go
// straight into the pipe or queue behind t as that round trip fell (LOST
// or DOUBLEINT by the parent's pace; docs/TRUST.md, "Whose bytes the
// parent's read lets in"; no test pins the one step).
func (h *readerHold) holdAndWait(t *Thread, interruptible bool) (woke bool) {
	if interruptible && h.room.wake.pending() {
		return true
	}
	h.mu.Lock()
	if h.isHeld() {
		h.mu.Unlock()
		return h.room.awaitRead(t, interruptible, nil, nil)
	}
	hold := 0
	return h.room.awaitRead(t, interruptible, func() {
		h.held = true
		h.holds++
		hold = h.holds
	}, func() {
		defer h.mu.Unlock()
		if !h.reader.ask(telemetry.MarkFD2Hold) {
			h.g.mu.Lock()
			h.held = false
			h.g.changedLocked()
			h.g.mu.Unlock()
			return
		}
		go h.parentReads(hold)
	})
}

// parentReads asks the parent for each read once nothing else in the model
// moves (onlyTheParentMovesLocked), and hands the room it made to the
// waiting writers (PipeRoom.drained); it ends with its hold, which the
// last write call on the pipe ends (endWriting).
func (h *readerHold) parentReads(hold int) {
	g, r := h.g, h.room
	for {
		over := false
		g.WaitUntil(func() bool {
			if !h.held || h.holds != hold {
				over = true
				return true
			}
			if h.sigintsDue > 0 || !g.onlyTheParentMovesLocked(true) {
				return false
			}
			n, err := pipes.Queued(2)
			h.heldRead = err != nil || n > 0 || len(r.queue) > 0
			return h.heldRead
		})
		if over {
			return
		}
		h.reader.ask(telemetry.MarkFD2ReadHeld)
		g.mu.Lock()
		h.heldRead = false
		idle := h.idleLocked()
		g.changedLocked()
		g.mu.Unlock()
		if idle {
			// The last write call ended during the read (idleLocked).
			h.releaseDrained()
			continue
		}
		r.drained(nil) // the parent's read: no drainer thread of ours
	}
}

// SIGINTDue says that an observer of the program may send a SIGINT on a
// blocked write and has not yet decided, or its SIGINT has not yet reached
// the model; SIGINTSettled that it is done. Meanwhile the held reader does
// not read (parentReads): whether a read came before the SIGINT ended the
// write, and so whether the hold ended with it, would be the scheduler's
// (no test pins it).
func (f *FD2) SIGINTDue() { f.hold.addSIGINTsDue(1) }

// SIGINTSettled ends a SIGINTDue.
func (f *FD2) SIGINTSettled() { f.hold.addSIGINTsDue(-1) }

func (h *readerHold) addSIGINTsDue(d int) {
	h.g.mu.Lock()
	h.sigintsDue += d
	h.g.changedLocked()
	h.g.mu.Unlock()
}
