package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/internal/config"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/verdict"
)

// TestEveryRunReplaysAlike measures docs/TRUST.md ("Determinism")'s claim that a seed
// decides the run: LOGJAM_DETERMINISM_RUNS=N plays N random schedules from
// LOGJAM_DETERMINISM_SEED (default 1) under LOGJAM_PROFILE (default local),
// each three times (the run and two replays), two children at a time, and
// fails naming every seed whose three classes are not the same. Skipped
// without the variable: it is a measurement, minutes long.
func TestEveryRunReplaysAlike(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LOGJAM_DETERMINISM_RUNS"))
	if n <= 0 {
		t.Skip("set LOGJAM_DETERMINISM_RUNS=N to measure")
	}
	seed, _ := strconv.ParseUint(os.Getenv("LOGJAM_DETERMINISM_SEED"), 10, 64)
	if seed == 0 {
		seed = 1
	}
	profile := os.Getenv("LOGJAM_PROFILE")
	if profile == "" {
		profile = "local"
	}
	r := testRunner(t, profile)
	ctx := context.Background()
	seeds := make(chan uint64)
	var mu sync.Mutex
	var wg sync.WaitGroup
	disagree, failing, done := 0, 0, 0
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sd := range seeds {
				s := Draw(sd, schedule.Filter{})
				var got [3]string
				var outs [3]*cell.Outcome
				ok := false
				for i := range got {
					out, err := r.Run(ctx, s)
					if err != nil {
						t.Errorf("seed %d: %v", sd, err)
						return
					}
					outs[i] = out
					got[i] = Class(s, out.Observed, out.Cycle)
					ok = i == 0 && out.Observed == verdict.OK || i > 0 && ok
				}
				mu.Lock()
				if got[0] != got[1] || got[0] != got[2] {
					disagree++
					t.Errorf("seed %d: %v; the three plays' evidence: %s", sd, got, keepPlays(r, sd, s, outs))
				}
				if !ok {
					failing++
				}
				if done++; done%500 == 0 {
					// A measurement stopped early keeps what it found.
					t.Logf("%d of %d runs: %d failing, %d disagreed", done, n, failing, disagree)
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		seeds <- SeedOf(seed, i)
	}
	close(seeds)
	wg.Wait()
	t.Logf("%d runs from seed %d (profile %s), each replayed twice: %d failing, %d disagreed", n, seed, profile, failing, disagree)
}

// keepPlays leaves the evidence bundle of each play of a seed whose plays
// disagreed in reports/determinism/seed-N/play-K (a flake is found by
// comparing them) and returns the folder.
func keepPlays(r Runner, seed uint64, s schedule.Schedule, outs [3]*cell.Outcome) string {
	wd, _ := os.Getwd()
	cfg, err := config.Find(wd)
	if err != nil {
		return "(not kept: " + err.Error() + ")"
	}
	dir := filepath.Join(filepath.Dir(cfg), "reports", "determinism", fmt.Sprintf("seed-%d", seed))
	for i, out := range outs {
		c := report.Cell{ID: "R", Name: fmt.Sprintf("R seed=%d play %d", seed, i+1), Family: "random",
			Cell:     scenario.Cell{Scenario: "R", Policy: s.Policy, Variant: s.Variant, Platform: s.Platform, Python: s.Python},
			Expected: verdict.OK, Observed: out.Observed, Ms: out.Ms, Rerun: ReplayCommand(s),
			Evidence: report.Evidence{Reason: out.Reason, Cycle: out.Cycle, Ledger: out.Ledger, Command: out.Command}}
		b, _ := out.Bundle(c, Spec(s), r.Prof(), r.Bin)
		if err := report.WriteBundle(filepath.Join(dir, fmt.Sprintf("play-%d", i+1)), b); err != nil {
			return "(not kept: " + err.Error() + ")"
		}
	}
	return dir
}
