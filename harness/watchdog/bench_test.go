package watchdog

import (
	"context"
	"logjam/verdict"
	"slices"
	"testing"
	"time"
)

// BenchmarkSpawnNoop measures Run from spawn to the exit of a child that does
// nothing (the test binary re-executed), i.e. the watchdog's fixed cost per
// scenario on top of the child's own start-up.
func BenchmarkSpawnNoop(b *testing.B) {
	for b.Loop() {
		res, err := Run(context.Background(), childCmd(b, "noop"), Config{Deadline: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if res.Verdict != verdict.NoMarker {
			b.Fatalf("verdict %s: %s", res.Verdict, res.Reason)
		}
	}
}

// BenchmarkSpawnNoopBareExec is the baseline for BenchmarkSpawnNoop: the same
// child under a plain exec.Cmd.Run, with no group, telemetry or capture.
func BenchmarkSpawnNoopBareExec(b *testing.B) {
	for b.Loop() {
		if err := childCmd(b, "noop").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCycleToVerdict measures, in Fast mode, the time from the child
// writing its cycle event (the event carries the child's wall clock) to Run
// returning Hang: reading the event, SIGQUIT, the child's dump, SIGKILL,
// reaping and draining the pipes. ns/op also includes the spawn and the
// child's way into the deadlock.
func BenchmarkCycleToVerdict(b *testing.B) {
	var toVerdict, toDump []time.Duration
	for b.Loop() {
		res, err := Run(context.Background(), childCmd(b, "deadlock"), Config{Deadline: 30 * time.Second, Mode: Fast})
		returned := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		if res.Verdict != verdict.Hang || res.Cycle == nil {
			b.Fatalf("verdict %s, cycle %v: %s", res.Verdict, res.Cycle, res.Reason)
		}
		var cycle, dump struct {
			WallNs int64 `json:"wall_ns"`
		}
		if err := res.Cycle.Decode(&cycle); err != nil || cycle.WallNs == 0 {
			b.Fatalf("cycle event without wall_ns: %s", res.Cycle.Raw)
		}
		toVerdict = append(toVerdict, returned.Sub(time.Unix(0, cycle.WallNs)))
		if res.Dump != nil && res.Dump.Decode(&dump) == nil && dump.WallNs != 0 {
			toDump = append(toDump, time.Unix(0, dump.WallNs).Sub(time.Unix(0, cycle.WallNs)))
		}
	}
	reportLatency(b, "cycle-to-verdict", toVerdict)
	reportLatency(b, "cycle-to-dump", toDump)
}

// reportLatency reports the median and the maximum of samples, in ms.
func reportLatency(b *testing.B, name string, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(samples[len(samples)/2]), "ms-"+name+"-p50")
	b.ReportMetric(ms(samples[len(samples)-1]), "ms-"+name+"-max")
}
