package sim

import (
	"slices"
	"testing"
)

// The eval loop's switch hands the GIL to its first waiter with the
// switching thread already queued behind it: the waiter finds it queued
// the moment it runs, however late the switching goroutine is scheduled
// (docs/TRUST.md, "The eval loop's switch").
func TestASwitchQueuesBeforeTheWaiterRuns(t *testing.T) {
	in := newInterp(nil, Linux, Version{3, 12, 0})
	a, b := in.newThread("A", false, false), in.newThread("B", false, false)
	a.AcquireGIL()
	queuedWhenBRan := make(chan bool, 1)
	go func() {
		b.AcquireGIL()
		in.G.mu.Lock()
		queuedWhenBRan <- slices.Contains(in.GIL.waiters, a)
		in.G.mu.Unlock()
		b.ReleaseGIL()
	}()
	in.G.WaitUntil(func() bool { return slices.Contains(in.GIL.waiters, b) })
	a.SwitchGIL()
	if !<-queuedWhenBRan {
		t.Error("B got the GIL before A was queued behind it: B could drop and retake it before A's turn")
	}
	if !a.HoldsGIL() {
		t.Error("A's switch returned without the GIL")
	}
}

// With no thread waiting, the switch keeps the GIL.
func TestASwitchWithNoWaiterKeepsTheGIL(t *testing.T) {
	in := newInterp(nil, Linux, Version{3, 12, 0})
	a := in.newThread("A", false, false)
	a.AcquireGIL()
	a.SwitchGIL()
	if !a.HoldsGIL() {
		t.Error("A's switch with no waiter let the GIL go")
	}
}
