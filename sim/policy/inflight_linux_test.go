package policy_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"logjam/scenario"
	"logjam/sim"
	"logjam/telemetry"
)

// inFlightChild (spec "policy"): with the parent's reader stalled, the
// main thread fills most of fd 2's one-page pipe; T2 takes the GIL, drops
// it for a write(2) of two pages (which finds no room) and is slow to get
// there (a planted 50 ms, the window a loaded machine opens); the main
// thread, next in the GIL's queue, logs one line outside a call (direct,
// GIL held). The child asks the reader to read again once only it can
// move.
func inFlightChild(name string) int {
	rt := childRuntime(name, sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}, ReaderAcks: true})
	if rt == nil {
		return 2
	}
	main := rt.Main
	rt.FD2.WriteDirect(main, bytes.Repeat([]byte(fmt.Sprintf("%-79s\n", "filler")), 40))
	blob := bytes.Repeat([]byte(fmt.Sprintf("%-79s\n", "T2 flush")), 2*4096/80)
	t2 := rt.In.Start("T2", false, func(t *sim.Thread) *sim.PyErr {
		t.ReleaseGILNative()
		time.Sleep(50 * time.Millisecond) // planted: T2 in flight, not yet at its write(2)
		rt.FD2.WriteDirect(t, blob)
		t.AcquireGIL()
		return nil
	})
	rt.G.WaitUntil(func() bool { return slices.Contains(rt.In.GIL.WaitersLocked(), t2) })
	go func() {
		rt.G.WaitUntilOnlyTheParentMoves(false)
		rt.Tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Resume})
	}()
	main.ReleaseGIL()
	main.AcquireGIL() // after T2, which drops the GIL for its write
	rt.Log(main, sim.Info, "module.cpp", 58, "%s", "main's line")
	main.Join(t2)
	rt.In.DumpStreams()
	return 0
}

// docs/TRUST.md, "Whose bytes the parent's read lets in": the GIL's holder
// writes to fd 2 only once a thread that dropped the GIL for its write(2)
// has reached its next wait, so T2's write finds the pipe full first and
// the main thread's line waits its turn behind it, however long T2 took to
// get there. Before, the line went into the pipe ahead of T2's write or
// behind it as the scheduler ran the two (random search: merged, LOST or
// DOUBLEINT).
func TestAWriteInFlightReachesFD2BeforeTheGILHoldersLine(t *testing.T) {
	for _, pol := range []string{"merged", "adaptive"} {
		t.Run(pol, func(t *testing.T) {
			out := inFlightRun(t, pol)
			line, blob := bytes.Index(out, []byte("main's line")), bytes.Index(out, []byte("T2 flush"))
			if line < 0 || blob < 0 {
				t.Fatalf("fd 2 lacks main's line (%d) or T2's write (%d):\n%s", line, blob, out)
			}
			if line < blob {
				t.Fatalf("main's line reached fd 2 before T2's write, which was under way first")
			}
		})
	}
}

// inFlightRun plays inFlightChild under pol with the suites' own parent
// side of fd 2 (stalled until the child resumes it) and returns fd 2's
// bytes.
func inFlightRun(t *testing.T, pol string) []byte {
	out, err := parentSide(t, "in-flight "+pol, scenario.FD2ParentPipe, true, nil)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	return out
}
