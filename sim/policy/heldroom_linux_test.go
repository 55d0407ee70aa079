package policy_test

import (
	"bytes"
	"fmt"
	"testing"

	"logjam/scenario"
	"logjam/sim"
	"logjam/telemetry"
)

// t2Lines is 64 pages of 80-byte lines: more than the parent can read
// before T2's write finds the one-page pipe full, however fast it reads.
const t2Lines = 64 * 4096 / 80

// heldRoomChild (spec "policy"): T2 drops the GIL and writes t2Lines lines
// to fd 2, a one-page pipe the parent drains, in one write; once T2 waits
// for room, the main thread's binding call logs one line.
func heldRoomChild(name string) int {
	rt := ackedRuntime(name)
	if rt == nil {
		return 2
	}
	main := rt.Main
	blob := bytes.Repeat([]byte(fmt.Sprintf("%-79s\n", "T2 flush")), t2Lines)
	t2 := rt.In.Start("T2", false, func(t *sim.Thread) *sim.PyErr {
		t.ReleaseGILNative()
		rt.FD2.WriteDirect(t, blob)
		t.AcquireGIL()
		return nil
	})
	main.ReleaseGIL()
	rt.G.WaitUntilAnyWaits(rt.FD2.Room())
	main.AcquireGIL()
	be := rt.NewBackend("xnnpack")
	rt.Call(main, "execute", func() *sim.NativeError { return be.ExecuteLogging(main, sim.Info, 1, 80) })
	main.Join(t2)
	rt.In.DumpStreams()
	return 0
}

// docs/TRUST.md, "Whose bytes the parent's read lets in": while a write(2)
// waits for the parent to read its pipe, the room a read frees is the
// waiting writer's, so another thread's room check finds none, however
// fast or slow the parent reads. Before, the parent read as bytes arrived
// and the check found room (its line went into the middle of T2's write)
// or not as the reader's pace went: random search, merged, LOST in most
// plays beside two busy loops, OK otherwise.
func TestARoomCheckBesideAWriteWaitingForTheParentFindsNone(t *testing.T) {
	for _, pol := range []string{"merged", "adaptive"} {
		t.Run(pol, func(t *testing.T) {
			if route := heldRoomRun(t, pol); route != "kept" {
				t.Fatalf("main's line went %q beside T2's write waiting for the parent, want kept", route)
			}
		})
	}
}

// heldRoomRun plays heldRoomChild under pol with the suites' own parent
// side of fd 2 (reading on) and returns main's line's route.
func heldRoomRun(t *testing.T, pol string) string {
	route := ""
	out, err := parentSide(t, "held-room "+pol, scenario.FD2ParentPipe, false, func(ev telemetry.Event) {
		if r, ok := telemetry.As[telemetry.Route](ev); ok && r.Thread == "MainThread" && route == "" {
			route = r.Route
		}
	})
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if n := bytes.Count(out, []byte("T2 flush")); n != t2Lines {
		t.Errorf("fd 2 holds %d of T2's %d lines", n, t2Lines)
	}
	return route
}
