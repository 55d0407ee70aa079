package search

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"

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
	disagree, failing := 0, 0
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sd := range seeds {
				s := Draw(sd, schedule.Filter{})
				var got [3]string
				ok := false
				for i := range got {
					out, err := r.Run(ctx, s)
					if err != nil {
						t.Errorf("seed %d: %v", sd, err)
						return
					}
					got[i] = Class(s, out.Observed, out.Cycle)
					ok = i == 0 && out.Observed == verdict.OK || i > 0 && ok
				}
				mu.Lock()
				if got[0] != got[1] || got[0] != got[2] {
					disagree++
					t.Errorf("seed %d: %v", sd, got)
				}
				if !ok {
					failing++
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
