package sim

import (
	"fmt"
	"slices"
)

// Thread is a Python thread (or a native thread the runtime attached): a
// goroutine carrying its identity, the locks it holds and what it waits for.
type Thread struct {
	ID     int
	Name   string
	Daemon bool
	Main   bool

	in *Interp

	// guarded by the graph's mutex
	held          []*Lock
	waiting       Resource
	waits         int  // waits begun by waitOn, counting this one
	interruptible bool // the current wait ends early when a signal arrives
	ended         bool
	// released: the thread dropped the GIL for native code that ends by
	// itself (ReleaseGILNative) and has not taken it back; until it waits
	// for something (the GIL again, a lock, room on fd 2) it is in flight.
	released bool
	// native: a thread the runtime attached (a forwarder's reader), never
	// waited for by the GIL's release barrier (inFlightLocked).
	native bool
	// queuing: a native thread on its way to the GIL's queue after work the
	// model decided (a forwarder's read, FD2.Drained); until it is queued,
	// another thread's ReleaseGIL waits for it, as for one in flight.
	queuing bool
	// parked: the condition the thread waits for in a wait the wait-for
	// graph does not show (Graph.parkLocked), nil when it waits for none;
	// WaitUntilOnlyTheParentMoves takes it for a thread that cannot move
	// while the condition does not hold.
	parked func() bool
	// roomSince: the drainer's read count when the current wait for room
	// on an in-process-drained pipe began (FD2.Drained).
	roomSince int

	done chan struct{}

	// sink: the sink this thread's lines go through when it is not the
	// process's (a forked child's copy: Runtime.Fork); set before it runs.
	sink Policy

	// owned by the thread's own goroutine
	depth int    // binding-call scope depth
	errs  []byte // Error lines of the current call, for the exception text
}

func (t *Thread) heldNamesLocked() []string {
	names := make([]string, 0, len(t.held))
	for _, l := range t.held {
		names = append(names, l.name)
	}
	return names
}

func (t *Thread) dropHeldLocked(l *Lock) {
	if i := slices.Index(t.held, l); i >= 0 {
		t.held = slices.Delete(t.held, i, i+1)
	}
}

// InCall reports whether the thread is inside a binding call.
func (t *Thread) InCall() bool { return t.depth > 0 }

// HoldsGIL reports whether the thread holds the GIL.
func (t *Thread) HoldsGIL() bool { return t.in.GIL.HeldBy(t) }

// AcquireGIL takes the GIL (PyEval_RestoreThread). Once finalization has
// started, any thread but the finalizing one never gets it: take_gil checks
// before waiting and again once it holds the GIL (dropping it first), and the
// thread meets its rule's fate (finalize.go); that call does not return.
func (t *Thread) AcquireGIL() {
	g := t.in.G
	if t.in.mustExit(t) {
		g.mu.Lock()
		t.queuing = false
		g.changedLocked()
		g.mu.Unlock()
		t.in.afterFinalization(t)
	}
	t.in.GIL.Acquire(t)
	g.mu.Lock()
	t.queuing = false
	g.mu.Unlock()
	if t.in.mustExit(t) {
		t.in.GIL.Release(t)
		t.in.afterFinalization(t)
	}
	g.mu.Lock()
	t.released = false
	g.mu.Unlock()
}

// ReleaseGIL drops the GIL (PyEval_SaveThread). A barrier first: every
// other thread that dropped the GIL to run native code that ends by itself
// (ReleaseGILNative: a write(2), a sleep inside a write) has reached its
// next wait (queued for the GIL again, a lock, room on fd 2 an in-process
// thread drains) or ended. So who takes the GIL next is the FIFO queue's
// decision on the model's state, never how long a write(2) took: without
// it, whether a writer was back in the queue when the holder let go
// decided the interleaving (random search: pystderr on a busy terminal
// came out HANG or CRASH).
func (t *Thread) ReleaseGIL() { t.releaseGIL(false) }

// ReleaseGILNative is ReleaseGIL before native code that ends by itself
// without any other thread's help (Py_BEGIN_ALLOW_THREADS around a
// write(2), a sleep): until its next wait, the thread is in flight, and the
// next ReleaseGIL of another thread waits for it.
func (t *Thread) ReleaseGILNative() { t.releaseGIL(true) }

func (t *Thread) releaseGIL(native bool) {
	t.awaitReleaseBarrier(native)
	t.in.GIL.Release(t)
}

// awaitReleaseBarrier is the barrier before t lets the GIL go (ReleaseGIL,
// SwitchGIL): no other thread is in flight; t is marked as running native
// code on its own or not.
func (t *Thread) awaitReleaseBarrier(native bool) {
	g := t.in.G
	g.mu.Lock()
	g.parkLocked(t, func() bool { return !g.inFlightLocked(t) })
	t.released = native
	g.mu.Unlock()
}

// SwitchGIL is the eval loop's switch between two bytecodes (drop_gil,
// then take_gil at once): the GIL goes to its first waiter and t queues
// behind the others in one step, after ReleaseGIL's barrier; with no
// waiter, t keeps it. As ReleaseGIL then AcquireGIL, a waiter given the
// GIL could drop it and take it back, as often as the scheduler let it,
// before t was queued (a daemon's flushes before the exit: CRASH or OK;
// docs/TRUST.md, "The eval loop's switch"; pinned by
// TestASwitchQueuesBeforeTheWaiterRuns).
func (t *Thread) SwitchGIL() {
	t.awaitReleaseBarrier(false)
	t.in.GIL.switchTo(t)
	if t.in.mustExit(t) {
		t.in.GIL.Release(t)
		t.in.afterFinalization(t)
	}
}

// inFlightLocked reports whether a thread other than self runs native code
// without the GIL and has not yet reached a settled wait.
func (g *Graph) inFlightLocked(self *Thread) bool {
	for _, o := range g.threads {
		if o != self && o.inFlightLocked() {
			return true
		}
	}
	return false
}

// inFlightLocked reports whether t runs native code without the GIL, or is
// on its way to the GIL's queue, and has not yet reached a settled wait.
// A forwarder counts too while it sleeps in its sink's write: whether the
// main thread filled the pipe before that sleep ended was the clock's
// (docs/TRUST.md, "A forwarder's sleep").
func (t *Thread) inFlightLocked() bool {
	return (t.queuing || t.released) && !t.SettledLocked()
}

// wokenBeforeLocked reports whether a thread made before self is on its
// way back to the GIL after a wait a signal ended: in flight
// (inFlightLocked), or still shown waiting for the signal with the GIL
// dropped (its goroutine has not run since the signal woke it).
func (g *Graph) wokenBeforeLocked(self *Thread) bool {
	for _, o := range g.threads {
		if o == self {
			return false
		}
		waking := !o.native && o.released && o.waiting == Resource(SignalArrival{})
		if waking || o.inFlightLocked() {
			return true
		}
	}
	return false
}

// WaitState is what a thread waits for now (For is nil when it waits for
// nothing), how many waits it has begun, and whether a signal can end the
// current one early.
type WaitState struct {
	For           Resource
	Seq           int
	Interruptible bool
}

// SettledLocked reports whether t has reached a state only the process can
// change: it has ended, or it waits for something other than room on a
// pipe or terminal the parent drains (the parent reads on, and every stall
// ends, so that wait ends by itself; a barrier that took it for settled
// would depend on how fast the parent reads). For WaitUntil conditions
// (graph mutex held).
func (t *Thread) SettledLocked() bool {
	if t.ended {
		return true
	}
	if room, ok := t.waiting.(*PipeRoom); ok {
		return room.drainer != nil
	}
	return t.waiting != nil
}

// blockedLocked reports whether t waits for something only the process
// can end and that is not there yet: not for a SIGINT the parent sends or
// room on a pipe or terminal the parent drains (those end by themselves),
// nor for a thread that has ended or an event that is set (the waiter is
// only not yet awake). Graph mutex held.
func (t *Thread) blockedLocked() bool {
	switch r := t.waiting.(type) {
	case nil, SignalArrival:
		return false
	case *PipeRoom:
		return r.drainer != nil
	case threadEnd:
		return !r.t.ended
	case *Event:
		return !r.set
	}
	return true
}

// EndedLocked reports whether the thread has ended; for WaitUntil
// conditions (graph mutex held).
func (t *Thread) EndedLocked() bool { return t.ended }

// WaitStateLocked is for WaitUntil conditions (graph mutex held).
func (t *Thread) WaitStateLocked() WaitState {
	return WaitState{For: t.waiting, Seq: t.waits, Interruptible: t.interruptible}
}

// threadEnd is what a join waits for.
type threadEnd struct{ t *Thread }

func (r threadEnd) ResourceName() string { return "the end of thread " + r.t.Name }
func (r threadEnd) holders() []*Thread {
	if r.t.ended {
		return nil
	}
	return []*Thread{r.t}
}

// Join waits for other to end, releasing the GIL meanwhile (Thread.join).
func (t *Thread) Join(other *Thread) {
	t.ReleaseGIL()
	t.in.G.waitOn(t, threadEnd{other}, func() { <-other.done })
	t.AcquireGIL()
}

// JoinNative waits for other to end keeping the GIL, as native code does
// when it waits for its own threads inside a binding call
// (std::thread::join, a future's get): nothing in the wait releases it, so
// a thread it waits for that needs the GIL closes a cycle (D3).
func (t *Thread) JoinNative(other *Thread) {
	t.in.G.waitOn(t, threadEnd{other}, func() { <-other.done })
}

// Done is closed when the thread has ended.
func (t *Thread) Done() <-chan struct{} { return t.done }

func (t *Thread) String() string {
	if t == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s", t.Name)
}

// Event is threading.Event: waiting releases the GIL; nothing in the
// process "holds" an event, so it never closes a cycle.
type Event struct {
	name string
	ch   chan struct{}
	set  bool
}

// NewEvent returns an unset event.
func (in *Interp) NewEvent(name string) *Event { return &Event{name: name, ch: make(chan struct{})} }

// ResourceName implements Resource.
func (e *Event) ResourceName() string { return "event " + e.name }
func (e *Event) holders() []*Thread   { return nil }

// Set wakes every waiter; idempotent.
func (e *Event) Set(in *Interp) {
	in.G.mu.Lock()
	defer in.G.mu.Unlock()
	if !e.set {
		e.set = true
		close(e.ch)
		in.G.cond.Broadcast() // a barrier may wait for it (IsSetLocked)
	}
}

// IsSetLocked reports whether the event is set, for a barrier's condition
// (the graph's mutex held).
func (e *Event) IsSetLocked() bool { return e.set }

// Wait blocks t until the event is set, with the GIL released. A set event
// returns at once and keeps the GIL, as threading.Event.wait does (its
// uncontended Condition lock never drops the GIL).
func (e *Event) Wait(t *Thread) {
	t.in.G.mu.Lock()
	set := e.set
	t.in.G.mu.Unlock()
	if set {
		return
	}
	held := t.HoldsGIL()
	if held {
		t.ReleaseGIL()
	}
	t.in.G.waitOn(t, e, func() { <-e.ch })
	if held {
		t.AcquireGIL()
	}
}
