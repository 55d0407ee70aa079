package policy_test

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"logjam/scenario"
	"logjam/sim"
)

// abortInFlightChild (spec "policy"): T2 takes the GIL, drops it for a
// write(2) of its line to fd 2 (a file) and is slow to get there (a
// planted 50 ms, the window a loaded machine opens); the main thread takes
// the GIL back and aborts the process.
func abortInFlightChild(name string) int {
	rt := ackedRuntime(name)
	if rt == nil {
		return 2
	}
	main := rt.Main
	t2 := rt.In.Start("T2", false, func(t *sim.Thread) *sim.PyErr {
		t.ReleaseGILNative()
		time.Sleep(50 * time.Millisecond) // planted: T2 in flight, not yet at its write(2)
		rt.FD2.WriteDirect(t, []byte("T2's line\n"))
		t.AcquireGIL()
		return nil
	})
	rt.G.WaitUntil(func() bool { return slices.Contains(rt.In.GIL.WaitersLocked(), t2) })
	main.ReleaseGIL()
	main.AcquireGIL() // after T2, which drops the GIL for its write
	rt.Abort("planted: the main thread aborts")
	return 0
}

// docs/TRUST.md, "Random schedules: a seed decides the run": an abort comes
// once a write(2) another thread dropped the GIL for has ended or reached
// its next wait, so T2's line is on fd 2 however long T2 took to get
// there. Before, it was there or not as the scheduler ran the two
// (random search: pystderr, a thread whose decode error terminates the
// process while main's flush was in flight: main's line lost in 6 of 480
// plays).
func TestAnAbortComesAfterAWriteInFlight(t *testing.T) {
	out, err := parentSide(t, "abort-in-flight pystderr", scenario.FD2File, false, nil)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGABRT {
		t.Fatalf("child: %v, want killed by SIGABRT", err)
	}
	if !bytes.Contains(out, []byte("T2's line")) {
		t.Fatalf("fd 2 lacks T2's line, whose write(2) was under way before the abort: %q", out)
	}
}
