package search

import (
	"context"
	"fmt"
	"logjam/scenario/schedule"
	"math"
	"slices"
	"sort"
	"sync"
)

// Finding is one cause of failure (Cause): the runs that showed it, the
// replay of its first, and that failure shrunk.
type Finding struct {
	Cause   string
	First   Result   // the cause's first failing run
	Runs    int      // how many runs showed it
	Classes []string // their classes (Class), in run order
	// Replayed is the cause the first failure's replay showed ("" for a
	// pass); the failure is shrunk only when it is Cause again.
	Replayed string
	Shrunk   Shrunk
	Err      error // the replay or the shrink could not run a child
}

// Hunt plays n schedules drawn from seed and, for each cause of failure,
// replays its first failure and shrinks it (budget child runs at most; 0:
// neither), procs children at a time, with results and findings in run
// order. A cause's replay and shrink start as soon as every earlier run
// has ended (its first failure is then known), beside the rest of the
// search (searchPriority says which child goes first). None of that
// changes what is found or printed, only how soon: each result is a
// function of the verdicts.
func (r Runner) Hunt(ctx context.Context, seed uint64, n, procs int, f schedule.Filter, budget int) ([]Result, []*Finding, error) {
	h := &hunt{play: r.result, slots: newSlots(procs)}
	return h.run(ctx, n, budget, func(i int) (uint64, schedule.Schedule) {
		sd := SeedOf(seed, i)
		return sd, Draw(sd, f)
	})
}

// result plays s in a child and says what it did.
func (r Runner) result(ctx context.Context, s schedule.Schedule) (Result, error) {
	out, err := r.Run(ctx, s)
	if err != nil {
		return Result{}, err
	}
	return Result{Schedule: s, Verdict: out.Observed, Class: Class(s, out.Observed, out.Cycle), Cause: Cause(s, out),
		Reason: out.Reason, Cycle: out.Cycle, Ms: out.Ms, Threads: threadsAtDump(out)}, nil
}

// hunt is a search with its replays and shrinks: how a schedule is played,
// and the children that may run at once.
type hunt struct {
	play  func(ctx context.Context, s schedule.Schedule) (Result, error)
	slots *slots
	wg    sync.WaitGroup // every replay and shrink
}

// searchPriority is the search's runs' priority: above every replay's
// and shrink's (1 + the first failure's ms), and each search worker keeps
// its slot until the search is done. A cause's replay and shrink wait for
// its first failure, found by the search: run first, the search ends early
// and every cause's chain of children is known then, so the longest start
// first; run in the gaps (as before), a cause found late in the search
// left its whole chain to the end, alone on an idle machine.
const searchPriority = math.MaxInt64

func (h *hunt) run(ctx context.Context, n, budget int, draw func(i int) (uint64, schedule.Schedule)) ([]Result, []*Finding, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]Result, n)
	ended := make([]bool, n)
	var findings []*Finding
	byCause := map[string]*Finding{}
	var mu sync.Mutex
	var firstErr error
	frontier := 0
	// reached takes in run i's result; under mu.
	reached := func(i int) {
		ended[i] = true
		for ; frontier < n && ended[frontier]; frontier++ {
			res := results[frontier]
			if !res.Failed() {
				continue
			}
			fd := byCause[res.Cause]
			if fd == nil {
				fd = &Finding{Cause: res.Cause, First: res}
				byCause[res.Cause] = fd
				findings = append(findings, fd)
				if budget > 0 {
					h.wg.Add(1)
					go func() {
						defer h.wg.Done()
						h.replayAndShrink(ctx, fd, budget)
					}()
				}
			}
			fd.Runs++
			if !slices.Contains(fd.Classes, res.Class) {
				fd.Classes = append(fd.Classes, res.Class)
			}
		}
	}
	// The heaviest runs first (cost: a forwarder that reads a few bytes at
	// a time makes a run take seconds where most take tens of ms): started
	// last, one would end the search late, and its cause's replay and
	// shrink, as slow, after it. Results stay in run order.
	runs := make([]struct {
		seed   uint64
		s      schedule.Schedule
		weight int
	}, n)
	order := make([]int, n)
	for i := range runs {
		runs[i].seed, runs[i].s = draw(i)
		runs[i].weight = cost(runs[i].s)
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return runs[order[a]].weight > runs[order[b]].weight })
	next := make(chan int)
	var search sync.WaitGroup
	for w := 0; w < h.slots.size; w++ {
		search.Add(1)
		go func() {
			defer search.Done()
			// A worker keeps its slot from one run to the next until the
			// search is done: released after each run, it went to a
			// replay or shrink that was waiting before the worker asked
			// again, whatever the priorities.
			if err := h.slots.acquire(ctx, searchPriority); err != nil {
				for range next { // ended: the rest are not played
				}
				return
			}
			defer h.slots.release()
			for i := range next {
				if ctx.Err() != nil {
					continue // ended: the rest are not played
				}
				seed, s := runs[i].seed, runs[i].s
				res, err := h.play(ctx, s)
				res.Index, res.Seed = i, seed
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("run %d (seed %d): %w", i, seed, err)
					}
					cancel()
				} else {
					results[i] = res
					reached(i)
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range order {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	search.Wait()
	h.wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return results, findings, firstErr
}

// replayAndShrink replays fd's first failure and, when the replay shows
// its cause again, shrinks it. Its plays go after the search's, the
// longest first failure's first: its shrink is likely the longest chain
// of slow children (each step waits for the verdict before it).
func (h *hunt) replayAndShrink(ctx context.Context, fd *Finding, budget int) {
	prio := 1 + fd.First.Ms
	play := func(ctx context.Context, s schedule.Schedule) (string, error) {
		if err := h.slots.acquire(ctx, prio); err != nil {
			return "", err
		}
		defer h.slots.release()
		res, err := h.play(ctx, s)
		return res.Cause, err
	}
	// The shrink starts beside the replay, and what it found is dropped
	// unless the replay showed the cause again: a replay that agrees (all
	// but a FLAKY one) no longer delays the chain by one child.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var shrunk Shrunk
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		shrunk, err = shrinkAhead(sctx, fd.First.Schedule, fd.Cause, budget, play, shrinkAheadRuns)
	}()
	fd.Replayed, fd.Err = play(ctx, fd.First.Schedule)
	if fd.Err != nil || fd.Replayed != fd.Cause {
		cancel()
		<-done
		return
	}
	<-done
	fd.Shrunk, fd.Err = shrunk, err
}

// shrinkAheadRuns: a shrink's candidates in flight at once (shrinkAhead).
// At 4, -random 200 -seed 7 -j 12 took 8.4 s where 1 took 13-15 s; 6
// and 8 spent more CPU on children the path left and ended later.
const shrinkAheadRuns = 4
