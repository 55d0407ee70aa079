package cell_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"logjam/harness/cell"
	"logjam/internal/config"
	"logjam/internal/testkit"
	"logjam/scenario"
)

// Figures for the notes, measured side by side on this machine; no test
// asserts a time.
//
//	go test -run '^$' -bench . -benchtime 50x ./cell/

var profile = config.Profile{Name: "bench", Deadline: 20 * time.Second, TimeoutScale: 1, Mode: "fast", Repeat: 1, GraceFloor: 2 * time.Second}

func percentiles(b *testing.B, unit string, xs []float64) {
	slices.Sort(xs)
	b.ReportMetric(xs[len(xs)/2], "p50-"+unit)
	b.ReportMetric(xs[(len(xs)*99)/100], "p99-"+unit)
	b.ReportMetric(xs[len(xs)-1], "max-"+unit)
}

// BenchmarkCycleToVerdict: from the wait-for cycle forming in the child (its
// telemetry timestamp) to the HANG verdict in the parent (D1, pystderr).
func BenchmarkCycleToVerdict(b *testing.B) {
	bin := testkit.Child(b)
	var lag []float64
	for b.Loop() {
		out, err := cell.Run(context.Background(), bin, cell.Spec{Cell: scenario.Cell{Scenario: "D1", Policy: "pystderr", Platform: "linux", Python: "3.12"}}, profile)
		if err != nil || out.Observed != "HANG" || out.Result.Cycle == nil {
			b.Fatalf("want HANG with a cycle, got %v %+v", err, out)
		}
		lag = append(lag, float64(out.Result.Duration.Microseconds())/1000-out.Result.Cycle.T)
	}
	percentiles(b, "ms", lag)
}

// BenchmarkD1CompletesUnderFD2: completion time of D1 under fd2 against the
// deadline (the ratio deadline / p99 is the margin).
func BenchmarkD1CompletesUnderFD2(b *testing.B) {
	bin := testkit.Child(b)
	var ms []float64
	for b.Loop() {
		out, err := cell.Run(context.Background(), bin, cell.Spec{Cell: scenario.Cell{Scenario: "D1", Policy: "fd2", Platform: "linux", Python: "3.12"}}, profile)
		if err != nil || out.Observed != "OK" {
			b.Fatalf("want OK, got %v %+v", err, out)
		}
		ms = append(ms, float64(out.Result.Duration.Microseconds())/1000)
	}
	percentiles(b, "ms", ms)
	slices.Sort(ms)
	b.ReportMetric(float64(profile.ScaledDeadline().Milliseconds())/ms[(len(ms)*99)/100], "deadline/p99")
}

// BenchmarkChildOverhead: spawn to exit of a child whose program does
// nothing but print done (H0), through the watchdog.
func BenchmarkChildOverhead(b *testing.B) {
	bin := testkit.Child(b)
	var ms []float64
	for b.Loop() {
		out, err := cell.Run(context.Background(), bin, cell.Spec{Cell: scenario.Cell{Scenario: "H0"}}, profile)
		if err != nil || out.Result.Verdict != "COMPLETED" {
			b.Fatalf("want a completed child, got %v %+v", err, out)
		}
		ms = append(ms, float64(out.Result.Duration.Microseconds())/1000)
	}
	percentiles(b, "ms", ms)
}
