package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A scenario that promises every daemon is queued for the GIL when
// finalization starts gets a refusal, not a finalization, when one is not.
func TestFinalizationRefusesABrokenPromise(t *testing.T) {
	in := newInterp(nil, Linux, Version{3, 12, 0})
	main := in.newThread("MainThread", false, true)
	main.AcquireGIL()
	never := in.NewEvent("never set")
	d := in.Start("daemon-1", true, func(t *Thread) *PyErr {
		never.Wait(t) // drops the GIL and never queues for it again
		return nil
	})
	main.ReleaseGIL()
	in.G.WaitUntilAs(main, "the daemon waits for the event", func() bool { return d.waiting == Resource(never) })
	main.AcquireGIL()
	in.PromiseAtFinalization("that every daemon thread is queued for the GIL", func() bool {
		return slices.Contains(in.GIL.WaitersLocked(), d)
	})
	err := in.Shutdown(main)
	var broken *BrokenPromise
	if !errors.As(err, &broken) {
		t.Fatalf("Shutdown returned %v, want a *BrokenPromise", err)
	}
	if !strings.Contains(err.Error(), "every daemon thread is queued for the GIL") {
		t.Errorf("the refusal does not name the promise: %v", err)
	}
	if in.Finalizing() {
		t.Error("finalization started although its promise did not hold")
	}
}

func TestFinalizationRunsWhenItsPromiseHolds(t *testing.T) {
	in := newInterp(nil, Linux, Version{3, 14, 0})
	main := in.newThread("MainThread", false, true)
	main.AcquireGIL()
	in.PromiseAtFinalization("nothing", func() bool { return true })
	if err := in.Shutdown(main); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if !in.Finalizing() {
		t.Error("finalization did not start")
	}
}
