package policy

import (
	"slices"
	"testing"

	"logjam/sim"
)

// logjam's at-fork rule, both parts: a fork while another thread holds the
// keep's lock leaves the child's copy free (the prepare handler waited for
// the holder to let go), and the lines the parent kept process-wide are
// not in the child's copy (the parent writes them; the child's flush would
// write them again). Row D5 (suites/deadlock) plays the lock's part as a
// cell; the header pins the same rule in Fork.*.
func TestAForkedChildNeitherWaitsForTheKeepNorWritesItAgain(t *testing.T) {
	rt, p := logjamOnDevNull(t)
	main := rt.Main
	p.mu.Acquire(main)
	p.outside.Add([]byte("I 00:00:01.000001 executorch:module.cpp:58] kept outside a call\n"))
	p.added++
	p.lostN, p.lostB = 2, 256 // a daemon's lines that found no room, for the parent's note
	p.mu.Release(main)
	holding := rt.In.NewEvent("the holder holds the keep's lock")
	holder := rt.In.StartNative("T1", false, func(th *sim.Thread) {
		p.mu.Acquire(th)
		holding.Set(rt.In)
		rt.G.WaitUntil(func() bool {
			return rt.G.ForkedLocked() || slices.Contains(p.mu.WaitersLocked(), main)
		})
		p.mu.Release(th)
	})
	rt.G.WaitUntil(holding.IsSetLocked)
	var free bool
	var kept, lost int
	status := rt.Fork(main, func(c *sim.Thread) int {
		cp := rt.SinkOf(c).(interface{ Unwrap() sim.Policy }).Unwrap().(*logjamSink)
		if free = cp.mu.TryAcquire(c); free {
			cp.mu.Release(c)
		}
		kept, lost = cp.outside.Count(), cp.lostN
		return 0
	})
	main.Join(holder)
	if status != 0 {
		t.Fatalf("the child's status: %d", status)
	}
	if !free {
		t.Error("the child's copy of the keep's lock was held: a thread of the parent held it at the fork, and the child would wait for it for ever")
	}
	if kept != 0 {
		t.Errorf("the child's copy keeps %d of the parent's lines: its next flush writes them a second time", kept)
	}
	if lost != 0 {
		t.Errorf("the child's copy counts %d of the parent's daemons' unwritten lines: a note in the child would count them a second time", lost)
	}
	if n := p.outside.Count(); n != 1 {
		t.Errorf("the parent's keep holds %d lines after the fork, want its 1", n)
	}
}
