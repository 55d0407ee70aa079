package cell_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"logjam/harness/cell"
	"logjam/internal/testkit"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/telemetry"
)

// A write that blocks behind a forwarder reading a byte at a time waits
// once a byte; it says it blocked once, not at every wait (seed 154 of
// -random 200 -seed 7 wrote 159,484 blocked-write events, 13 MB).
func TestABlockedWriteIsOneEventPerWrite(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux: a capture pipe's capacity")
	}
	bin := testkit.Child(t)
	s := schedule.Schedule{Kind: schedule.KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &schedule.Sink{FD2: schedule.FD2{Kind: schedule.FD2Wurlitzer, Capacity: 4096, Chunk: 1},
			Stderr:  schedule.Stderr{Kind: schedule.StderrOriginal},
			Threads: []schedule.Thread{{Calls: []schedule.Call{{Lines: 20, Size: 1000, Level: "I"}}}}}}
	spec := cell.Spec{Cell: scenario.Cell{Scenario: "R", Buffering: s.Buffering}, Schedule: s.Encode(), Failpoints: s.Failpoints(), Deadline: 20*time.Second + s.Slowness()}
	out, err := cell.Run(context.Background(), bin, spec, profile)
	if err != nil {
		t.Fatal(err)
	}
	blocked, lines := 0, 0
	for _, ev := range out.Result.Events {
		switch ev.Ev {
		case telemetry.KindBlockedWrite:
			blocked++
		case telemetry.KindLine:
			lines++
		}
	}
	if blocked == 0 || blocked > 2*lines+8 {
		t.Errorf("%d blocked-write events for %d lines (%s: %s), want at least one and at most one a write", blocked, lines, out.Observed, out.Reason)
	}
}
