package search

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// ReplayAgreement replays each of the first limit failures k times, procs
// children at a time, and prints how many gave the same class every time:
// a verdict that depends on the machine's timing shows here.
func (r Runner) ReplayAgreement(ctx context.Context, w io.Writer, results []Result, k, limit, procs int) (agree, total int, err error) {
	var failing []Result
	for _, res := range results {
		if res.Failed() && len(failing) < limit {
			failing = append(failing, res)
		}
	}
	type job struct{ i, rep int }
	got := make([][]string, len(failing))
	for i := range got {
		got[i] = make([]string, k)
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
					got[j.i][j.rep] = Class(s, out.Observed, out.Cycle)
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
		return 0, 0, firstErr
	}
	fmt.Fprintf(w, "\nreplay agreement (%d replays of each of %d failing runs)\n", k, len(failing))
	for i, res := range failing {
		same := true
		for _, c := range got[i] {
			same = same && c == res.Class
		}
		if same {
			agree++
		} else {
			fmt.Fprintf(w, "  seed %-6d %s, replayed as %v\n", res.Seed, res.Class, got[i])
		}
	}
	fmt.Fprintf(w, "  %d of %d gave the same class on every replay\n", agree, len(failing))
	return agree, len(failing), nil
}
