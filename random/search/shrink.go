package search

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"logjam/scenario/schedule"
)

// Shrink replays the schedule of run seed under rapid.Check and lets rapid
// shrink it: a candidate "fails" when its run has the same class. It
// returns the smallest failing schedule found, and how many children it
// ran. budget bounds the child runs (a candidate past it passes without a
// run), so the result does not depend on the machine's speed: the same
// seed shrinks to the same schedule.
func (r Runner) Shrink(ctx context.Context, seed uint64, f schedule.Filter, class string, budget int) (smallest schedule.Schedule, runs int, err error) {
	shrinkMu.Lock()
	defer shrinkMu.Unlock()
	if err := setRapidFlags(seed); err != nil {
		return schedule.Schedule{}, 0, err
	}
	smallest = Draw(seed, f)
	first := true
	var runErr error
	prop := func(t *rapid.T) {
		s := schedule.Gen(f).Draw(t, "schedule")
		if first {
			first = false
			if string(s.JSON()) != string(smallest.JSON()) {
				runErr = fmt.Errorf("rapid drew another schedule for seed %d than the search did", seed)
				return
			}
		}
		if runs >= budget || runErr != nil || ctx.Err() != nil {
			return
		}
		runs++
		out, err := r.Run(ctx, s)
		if err != nil {
			runErr = err
			return
		}
		if Class(s, out.Observed, out.Cycle) == class {
			if s.Faults() < smallest.Faults() || s.Faults() == smallest.Faults() && s.Lines() <= smallest.Lines() {
				smallest = s
			}
			t.Fatalf("same failure: %s", class)
		}
	}
	tb := &quietTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rapid.Check(tb, prop)
	}()
	<-done
	if runErr == nil {
		runErr = ctx.Err()
	}
	return smallest, runs, runErr
}

var (
	shrinkMu sync.Mutex // rapid's knobs are process-wide flags
	initOnce sync.Once
)

// setRapidFlags makes rapid.Check play exactly one case, seed's, then
// shrink it without a time limit that would make the result depend on the
// machine, and write no fail file.
func setRapidFlags(seed uint64) error {
	initOnce.Do(func() {
		// rapid asks testing.Short(), which needs the testing flags parsed.
		testing.Init()
		if !flag.Parsed() {
			_ = flag.CommandLine.Parse(nil)
		}
	})
	for k, v := range map[string]string{
		"rapid.checks": "1", "rapid.seed": fmt.Sprint(seed), "rapid.nofailfile": "true", "rapid.shrinktime": "1h",
	} {
		if err := flag.CommandLine.Set(k, v); err != nil {
			return fmt.Errorf("setting rapid's %s: %v", k, err)
		}
	}
	return nil
}

// quietTB is the testing.TB rapid.Check reports to outside `go test`.
type quietTB struct {
	mu     sync.Mutex
	failed bool
}

func (q *quietTB) Helper()              {}
func (q *quietTB) Name() string         { return "logjam-random-shrink" }
func (q *quietTB) Logf(string, ...any)  {}
func (q *quietTB) Log(...any)           {}
func (q *quietTB) Skipf(string, ...any) { runtime.Goexit() }
func (q *quietTB) Skip(...any)          { runtime.Goexit() }
func (q *quietTB) SkipNow()             { runtime.Goexit() }
func (q *quietTB) Errorf(string, ...any) {
	q.Fail()
}
func (q *quietTB) Error(...any) { q.Fail() }
func (q *quietTB) Fatalf(string, ...any) {
	q.Fail()
	runtime.Goexit()
}
func (q *quietTB) Fatal(...any) { q.Fatalf("") }
func (q *quietTB) FailNow()     { q.Fatalf("") }
func (q *quietTB) Fail() {
	q.mu.Lock()
	q.failed = true
	q.mu.Unlock()
}
func (q *quietTB) Failed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failed
}

// PrintFailures prints every failure (seed, class, the command that reruns
// it), then for the first failure of each class its exact replay command
// and its shrunk schedule: as JSON, as a Ginkgo Entry for suites/random and
// as a simrt command line with its GO_FAILPOINTS.
func PrintFailures(ctx context.Context, w io.Writer, r Runner, results []Result, f schedule.Filter, budget int) {
	firsts := map[string]Result{}
	count := map[string]int{}
	var classes []string
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
		if _, ok := firsts[res.Class]; !ok {
			firsts[res.Class] = res
			classes = append(classes, res.Class)
		}
		count[res.Class]++
	}
	sort.Slice(classes, func(i, j int) bool {
		if a, b := policyRank(classes[i]), policyRank(classes[j]); a != b {
			return a < b
		}
		return classes[i] < classes[j]
	})
	for _, c := range classes {
		res := firsts[c]
		fmt.Fprintf(w, "\n%s: %d runs, first seed %d\n", c, count[c], res.Seed)
		fmt.Fprintf(w, "  replay:   %s\n", ReplayCommand(res.Schedule))
		if budget == 0 {
			continue
		}
		s, runs, err := r.Shrink(ctx, res.Seed, f, c, budget)
		if err != nil {
			fmt.Fprintf(w, "  shrink:   %v\n", err)
			continue
		}
		fmt.Fprintf(w, "  shrunk:   faults %d -> %d, lines %d -> %d (%d child runs)\n", res.Schedule.Faults(), s.Faults(), res.Schedule.Lines(), s.Lines(), runs)
		fmt.Fprintf(w, "  schedule: %s\n", s.JSON())
		fmt.Fprintf(w, "  replay:   %s\n", ReplayCommand(s))
		fmt.Fprintf(w, "  entry:    %s\n", GinkgoEntry(fmt.Sprintf("seed %d: %s", res.Seed, c), s, res.Verdict))
		fmt.Fprintf(w, "  simrt:    %s\n", SimrtCommand(s))
	}
}
