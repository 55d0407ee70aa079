package search

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"logjam/scenario/schedule"
)

// Flaky is a failure that did not show again on every replay: its verdict
// depended on the machine's timing, a defect of the model (docs/TRUST.md ("Determinism")),
// whatever the policy. It is printed as FLAKY with its replay count, never
// shrunk, and it fails the search.
type Flaky struct {
	Seed    uint64
	Failure string   // the class or cause the search saw
	Got     []string // what each replay gave ("OK" for a pass)
	// Reason is the watchdog's and the ledger's account of the failing
	// play (Result.Reason), Other that of the first replay that differed,
	// when known: whether a HANG was a child that waited for a CPU past
	// its allowance shows only here.
	Reason, Other string
	// Threads is the failing play's threads at the watchdog's dump
	// (Result.Threads), when it took one.
	Threads string
}

// Agreed is how many replays showed the failure again.
func (f Flaky) Agreed() int {
	n := 0
	for _, g := range f.Got {
		if g == f.Failure {
			n++
		}
	}
	return n
}

func (f Flaky) String() string {
	s := fmt.Sprintf("FLAKY: seed %d %s: %d of %d replays agreed (gave %s)", f.Seed, f.Failure, f.Agreed(), len(f.Got), strings.Join(f.Got, "; "))
	if f.Reason != "" {
		s += "; the failing play: " + firstLine(f.Reason)
	}
	if f.Other != "" {
		s += "; the replay that differed: " + firstLine(f.Other)
	}
	if f.Threads != "" {
		s += "; the failing play's threads at its dump: " + f.Threads
	}
	return s
}

// PrintFlaky ends a search's output with its FLAKY failures, if any, and
// reports how many there were.
func PrintFlaky(w io.Writer, flaky []Flaky, filter schedule.Filter) int {
	if len(flaky) == 0 {
		return 0
	}
	fmt.Fprintf(w, "\n%d FLAKY: failures that did not reproduce on replay (the verdict depends on timing; a defect of the suite, not a finding)\n", len(flaky))
	for _, f := range flaky {
		fmt.Fprintf(w, "  %s\n  replay:   %s\n", f, SeedCommand(f.Seed, filter))
	}
	return len(flaky)
}

// ReplayAgreement replays each of the first limit failures k times, procs
// children at a time, and prints how many gave the same class every time;
// each that did not is FLAKY (returned): a verdict that depends on the
// machine's timing shows here.
func (r Runner) ReplayAgreement(ctx context.Context, w io.Writer, results []Result, k, limit, procs int) (flaky []Flaky, err error) {
	var failing []Result
	for _, res := range results {
		if res.Failed() && len(failing) < limit {
			failing = append(failing, res)
		}
	}
	type job struct{ i, rep int }
	got, why := make([][]string, len(failing)), make([][]string, len(failing))
	for i := range got {
		got[i], why[i] = make([]string, k), make([]string, k)
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for p := 0; p < max(1, procs); p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s := failing[j.i].Schedule
				out, err := r.Run(ctx, s)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					got[j.i][j.rep], why[j.i][j.rep] = Class(s, out.Observed, out.Cycle), out.Reason
				}
				mu.Unlock()
			}
		}()
	}
	for i := range failing {
		for rep := 0; rep < k; rep++ {
			jobs <- job{i, rep}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	fmt.Fprintf(w, "\nreplay agreement (%d replays of each of %d failing runs)\n", k, len(failing))
	agree := 0
	for i, res := range failing {
		f := Flaky{Seed: res.Seed, Failure: res.Class, Got: got[i], Reason: res.Reason, Threads: res.Threads}
		for j, c := range f.Got {
			if c == "" {
				f.Got[j] = "OK"
			}
			if f.Got[j] != f.Failure && f.Other == "" {
				f.Other = why[i][j]
			}
		}
		if f.Agreed() == k {
			agree++
			continue
		}
		flaky = append(flaky, f)
		fmt.Fprintf(w, "  %s\n", f)
	}
	fmt.Fprintf(w, "  %d of %d gave the same class on every replay\n", agree, len(failing))
	return flaky, nil
}
