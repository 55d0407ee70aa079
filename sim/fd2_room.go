package sim

import (
	"fmt"
	"slices"
)

// PipeRoom is room on fd 2, held by the thread that drains it. Behind an
// in-process drainer, or the parent's reader held (readerHold), the
// drainer's reads are the model's events, and the writers waiting for the
// room a read frees take it in turns (Drained, awaitRead).
type PipeRoom struct {
	kind    FDKind
	drainer *Thread // an in-process forwarder, or nil: the parent drains
	reads   int     // reads the in-process drainer has made (graph mutex)
	wakes   int     // signals that arrived (Wake), for in-process waits
	// queue: the writers waiting for the in-process drainer, in the order
	// they began to wait; trying: the one whose turn it is to write into
	// the room a read made (Drained), until it has written all or waits
	// again. Graph mutex.
	queue  []*Thread
	trying *Thread

	g    *Graph
	wake *wakePipe   // fd 2's wake-up pipe: a signal ends an interruptible wait
	hold *readerHold // the parent's reader held: its reads are events too
}

// ResourceName implements Resource.
func (r *PipeRoom) ResourceName() string {
	if r.drainer == nil {
		return fmt.Sprintf("room on fd 2 (a %s drained by the parent process)", r.kind)
	}
	return fmt.Sprintf("room on fd 2 (a %s)", r.kind)
}

func (r *PipeRoom) holders() []*Thread {
	if r.drainer == nil {
		return nil
	}
	return []*Thread{r.drainer}
}

// inProcess reports whether an in-process thread drains fd 2's pipe.
func (r *PipeRoom) inProcess() bool {
	r.g.mu.Lock()
	defer r.g.mu.Unlock()
	return r.drainer != nil
}

func (r *PipeRoom) readsAreEventsLocked() bool { return r.drainer != nil || r.hold.held }

// Drained is called by the in-process drainer after each read, with the
// room the read made. The writers waiting for that room try again one at a
// time, in the order they began to wait, each once the one before has
// written all it had or waits again; the drainer goes on only once every
// one has had its turn and none is still on its way back from its write
// (queued for the GIL again, or holding it). So a writer still shown
// waiting for room afterwards has really found none, which writer got the
// room is the queue's decision, and the drainer meets in the GIL's queue
// whoever its read let through. Without it, the drainer's next wait (for the
// GIL) could close a "cycle" with a writer whose write the read had already
// let through, and who took the GIL first, or the room, depended on the
// scheduler (random search: fd2 and adaptive on a wurlitzer pipe, HANG or
// BADESC).
func (f *FD2) Drained(drainer *Thread) { f.room.drained(drainer) }

func (r *PipeRoom) drained(drainer *Thread) {
	g := r.g
	g.mu.Lock()
	defer g.mu.Unlock()
	r.reads++
	// The drainer asks for the GIL next (to hand the chunk to Python): from
	// its read until it is queued, a holder that lets the GIL go waits for
	// it (Thread.queuing), so the FIFO queue, not the scheduler, decides
	// whether a writer that went on after its turn lets the GIL go to the
	// drainer or to another thread. A nil drainer is the parent's held
	// reader (readerHold.parentReads): nothing of it asks for the GIL.
	if drainer != nil {
		drainer.queuing = true
	}
	g.changedLocked()
	for r.trying != nil || r.staleWaiterLocked() != nil || drainer != nil && g.inFlightLocked(drainer) {
		g.cond.Wait()
	}
}

// staleWaiterLocked is the first writer, in the order they began to wait,
// whose wait for the drainer's read began before the drainer's last read:
// the next to try its write again. Graph mutex held.
func (r *PipeRoom) staleWaiterLocked() *Thread {
	for _, t := range r.queue {
		if t.waiting == Resource(r) && t.roomSince < r.reads {
			return t
		}
	}
	return nil
}

// turnDueLocked reports whether a writer other than t has its turn at the
// room a read made, or will take it next (staleWaiterLocked). Graph mutex
// held.
func (r *PipeRoom) turnDueLocked(t *Thread) bool {
	if o := r.trying; o != nil && o != t {
		return true
	}
	w := r.staleWaiterLocked()
	return w != nil && w != t
}

// endTurn ends t's turn at the room a read made (Drained): it has written
// all it had, or is about to wait again.
func (r *PipeRoom) endTurn(t *Thread) {
	r.g.mu.Lock()
	if r.trying == t {
		r.trying = nil
		r.g.changedLocked()
	}
	r.g.mu.Unlock()
}

// waitRead is a writer's wait for room on a pipe whose reads are the
// model's events (an in-process drainer's, or the held parent's): until
// the drainer has read again (Drained) and it is this writer's turn to
// try, or, when interruptible, a signal arrived (woke). Shown as a wait
// for room. A writer woken by a read holds the turn until its write call
// ends or it waits again (endTurn).
func (r *PipeRoom) waitRead(t *Thread, interruptible bool) (woke bool) {
	if interruptible && r.wake.pending() {
		return true
	}
	return r.awaitRead(t, interruptible, nil, nil)
}

// awaitRead is waitRead after its look for a pending wake-up: queued
// (before, if any, runs with the graph mutex held just before t is
// queued; queued, if any, without it just after), t waits for its turn.
func (r *PipeRoom) awaitRead(t *Thread, interruptible bool, before, queued func()) (woke bool) {
	g := r.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if before != nil {
		before()
	}
	if r.trying == t {
		r.trying = nil
	}
	reads, wakes := r.reads, r.wakes
	t.waiting, t.roomSince, t.interruptible = r, reads, interruptible
	t.waits++
	r.queue = append(r.queue, t)
	g.changedLocked()
	if queued != nil {
		g.mu.Unlock()
		queued()
		g.mu.Lock()
	}
	for !(r.reads != reads && r.trying == nil && r.staleWaiterLocked() == t) &&
		r.readsAreEventsLocked() && !(interruptible && r.wakes != wakes) {
		g.cond.Wait()
	}
	woke = r.reads == reads && interruptible && r.wakes != wakes
	if r.reads != reads && r.readsAreEventsLocked() && !woke {
		r.trying = t
	}
	if i := slices.Index(r.queue, t); i >= 0 {
		r.queue = slices.Delete(r.queue, i, i+1)
	}
	t.waiting, t.interruptible = nil, false
	g.changedLocked()
	return woke
}

// AwaitInFlight is the start of a write to fd 2 (a write(2), a
// non-blocking try, a policy's room check) by the GIL's holder: it comes
// once every other thread that dropped the GIL for native code (a FileIO write(2), a released
// flush) has reached its next wait (for room on fd 2, a lock, the GIL) or
// ended. The holder got the GIL from such a thread, or past it; without
// this, whether that thread's write(2) found the pipe before or after the
// holder's lines would be the scheduler's (docs/TRUST.md, "Whose bytes the
// parent's read lets in"; pinned by
// TestAWriteInFlightReachesFD2BeforeTheGILHoldersLine). It also comes once
// the writers whose turn a read has made (Drained) have taken it: the room
// a read frees is theirs first. A writer whose write(2) ended in its turn
// and went on with the GIL would otherwise meet the room of the next
// writer's turn taken or not (docs/TRUST.md, "A turn taken after the GIL's
// holder wrote"; pinned by suites/random's entry "seed 93194: adaptive
// HANG (a GIL holder's room check waits for the turns a read made)").
func (f *FD2) AwaitInFlight(t *Thread) {
	if t == nil {
		return
	}
	g := f.g
	g.mu.Lock()
	if t.in.GIL.OwnerLocked() == t {
		g.parkLocked(t, func() bool { return !g.inFlightUnwaitingLocked(t) && !f.room.turnDueLocked(t) })
	}
	g.mu.Unlock()
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
