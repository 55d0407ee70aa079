package search

import (
	"context"
	"os"
	"runtime"
	"testing"

	"logjam/internal/config"
	"logjam/internal/testkit"
	"logjam/scenario/schedule"
	"logjam/telemetry"
	"logjam/verdict"
)

// A timed stall of fd 2 ends at a state of the model (docs/TRUST.md,
// "Random schedules: a seed decides the run"): once stall_ms have passed
// since a write felt it AND every other thread waits for something only
// the process (or the stalled reader) can end. The main thread's flush
// through sys.stderr drops the GIL for 50 ms before its write(2)
// (gil_dropped_ms) and then blocks on the stalled pipe; T1 takes the GIL
// in that window and its room check waits its 100 ms, past the stall's
// 1 ms. Ended after the time alone, the stall let T1's check find the room
// the reader made (its lines direct), as a loaded machine would have with
// a 400 ms stall; ended once T1 too waits, T1's check finds none and T1
// keeps its lines, whatever the load.
func TestATimedStallEndsOnceOnlyTheReaderCanMove(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux: a pipe of one page")
	}
	s := schedule.Schedule{Kind: schedule.KindSink, Policy: "merged", Platform: "linux", Python: "3.12",
		Sink: &schedule.Sink{
			FD2:           schedule.FD2{Kind: schedule.FD2Pipe, Capacity: 4096, Stalling: schedule.Stalling{StallMs: 1}},
			Stderr:        schedule.Stderr{Kind: schedule.StderrOriginal},
			DaemonThreads: schedule.DaemonThreads{GILDroppedMs: 50},
			Threads: []schedule.Thread{
				{Calls: []schedule.Call{{Lines: 40, Size: 200, Level: "I"}}},
				{Calls: []schedule.Call{{Lines: 4, Size: 200, Level: "I"}}},
			}}}
	out, err := testRunner(t, "local").Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if out.Observed != verdict.OK {
		t.Fatalf("%s: %s", out.Observed, out.Reason)
	}
	routes := 0
	for _, ev := range out.Result.Events {
		r, ok := telemetry.As[telemetry.Route](ev)
		if !ok || r.Thread != "T1" {
			continue
		}
		routes++
		if r.Route != "kept" {
			t.Errorf("T1's line %d went to %s (%s): the stall ended while T1's room check was under way", r.Seq, r.Route, r.Why)
		}
	}
	if routes == 0 {
		t.Errorf("T1 logged no line")
	}
}

// testRunner is a Runner of the child (testkit.Child: the go command's
// cached build, as logjam chaos -random gets it) under the named profile
// of ginkgo.yml.
func testRunner(t *testing.T, profile string) Runner {
	t.Helper()
	wd, _ := os.Getwd()
	cfg, err := config.Find(wd)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := config.Load(cfg, profile)
	if err != nil {
		t.Fatal(err)
	}
	return Runner{Bin: testkit.Child(t), Profile: prof}
}
