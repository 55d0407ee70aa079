package search

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"logjam/scenario/schedule"
)

// PrintFailures prints every failure (seed, class, the command that reruns
// it), then for each cause (Cause) the runs that showed it, the exact
// replay of its first, and that failure shrunk (Shrink, budget child runs
// at most): as JSON, as a Ginkgo Entry for suites/random and as a simrt
// command line with its GO_FAILPOINTS. A cause is shrunk only when a
// replay of its first failure shows it again. The causes are shrunk side by
// side, procs children at a time; what is printed does not depend on which
// finishes first. A cause whose replay does not show it again is FLAKY
// (returned), not shrunk.
func PrintFailures(ctx context.Context, w io.Writer, r Runner, results []Result, f schedule.Filter, budget, procs int) (flaky []Flaky) {
	firsts := map[string]Result{}
	count := map[string]int{}
	classes := map[string][]string{}
	var causes []string
	any := false
	for _, res := range results {
		if !res.Failed() {
			continue
		}
		if !any {
			fmt.Fprintf(w, "\nfailures (rerun one: %s)\n", SeedCommand(res.Seed, f))
			any = true
		}
		fmt.Fprintf(w, "  seed %-6d %-36s faults %2d\n", res.Seed, res.Class, res.Schedule.Faults())
		if _, ok := firsts[res.Cause]; !ok {
			firsts[res.Cause] = res
			causes = append(causes, res.Cause)
		}
		count[res.Cause]++
		if !slices.Contains(classes[res.Cause], res.Class) {
			classes[res.Cause] = append(classes[res.Cause], res.Class)
		}
	}
	sort.Slice(causes, func(i, j int) bool {
		if a, b := policyRank(causes[i]), policyRank(causes[j]); a != b {
			return a < b
		}
		return causes[i] < causes[j]
	})
	if any {
		fmt.Fprintf(w, "\n%d causes\n", len(causes))
	}
	type shrunk struct {
		replayed string
		s        Shrunk
		err      error
	}
	done := make([]shrunk, len(causes))
	if budget > 0 {
		slots := make(chan struct{}, max(1, procs))
		play := func(ctx context.Context, s schedule.Schedule) (string, error) {
			slots <- struct{}{}
			defer func() { <-slots }()
			out, err := r.Run(ctx, s)
			if err != nil {
				return "", err
			}
			return Cause(s, out), nil
		}
		var wg sync.WaitGroup
		for i, c := range causes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				first := firsts[c]
				again, err := play(ctx, first.Schedule)
				done[i].replayed, done[i].err = again, err
				if err != nil || again != c {
					return
				}
				done[i].s, done[i].err = shrink(ctx, first.Schedule, c, budget, play)
			}()
		}
		wg.Wait()
	}
	for i, c := range causes {
		res := firsts[c]
		fmt.Fprintf(w, "\n%s\n", c)
		fmt.Fprintf(w, "  runs:     %d (%s), first seed %d\n", count[c], strings.Join(classes[c], "; "), res.Seed)
		fmt.Fprintf(w, "  replay:   %s\n", ReplayCommand(res.Schedule))
		if budget == 0 {
			continue
		}
		d := done[i]
		switch {
		case d.err != nil:
			fmt.Fprintf(w, "  shrink:   %v\n", d.err)
			continue
		case d.replayed != c:
			fl := Flaky{Seed: res.Seed, Failure: c, Got: []string{orPass(d.replayed)}}
			flaky = append(flaky, fl)
			fmt.Fprintf(w, "  %s: not shrunk\n", fl)
			continue
		}
		s := d.s.Schedule
		how := "1-minimal"
		if !d.s.Minimal {
			how = "budget spent, not 1-minimal"
		}
		fmt.Fprintf(w, "  shrunk:   faults %d -> %d, lines %d -> %d (%d child runs, %s)\n", res.Schedule.Faults(), s.Faults(), res.Schedule.Lines(), s.Lines(), d.s.Runs, how)
		fmt.Fprintf(w, "  schedule: %s\n", s.JSON())
		fmt.Fprintf(w, "  replay:   %s\n", ReplayCommand(s))
		fmt.Fprintf(w, "  entry:    %s\n", GinkgoEntry(fmt.Sprintf("seed %d: %s", res.Seed, res.Class), s, res.Verdict))
		fmt.Fprintf(w, "  simrt:    %s\n", SimrtCommand(s))
	}
	return flaky
}

func orPass(cause string) string {
	if cause == "" {
		return "OK"
	}
	return cause
}
