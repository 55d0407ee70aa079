package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"logjam/scenario/schedule"
)

// Shrunk is a failure's smallest schedule found.
type Shrunk struct {
	Schedule schedule.Schedule
	// Runs: the child runs spent, one per candidate judged; Weight: what
	// they weighed against the budget (cost).
	Runs, Weight int
	// Minimal: a whole pass over the single removals (every fault, thread,
	// call, line) found none that still fails the same way: the schedule
	// is 1-minimal. False when the budget could not pay for them all.
	Minimal bool
	// Steps are the changes taken, in order ("thread 2", "lines 0.1 40 ->
	// 20"): how the failure got small, for a person to follow.
	Steps []string
}

// test plays one schedule and returns its failure's cause ("" for a pass).
type test func(ctx context.Context, s schedule.Schedule) (string, error)

// shrink makes s, which failed with cause, smaller while it still fails
// with the same cause: greedy passes over a fixed list of changes
// (candidates), each removing or simplifying one thing, biggest first,
// until a pass takes none: the result is 1-minimal if that pass could pay
// for every candidate (budget child runs, each weighed by cost; one the
// budget left cannot pay for is passed over). One candidate is judged at a time, in list order; one that
// fails with the cause is taken and the next is tried from the same place
// in the new schedule's list (after a count, from that count's next try).
// Each distinct schedule is judged at most once. The path, and so the
// result and the runs counted, depend on the verdicts alone, never on
// timing or on how many children run at once; only a failure whose replay
// failed the same way is shrunk, and the child's barriers and seeds decide
// the verdicts.
func shrink(ctx context.Context, s schedule.Schedule, cause string, budget int, play test) (Shrunk, error) {
	return shrinkAhead(ctx, s, cause, budget, play, 1)
}

// shrinkAhead is shrink with children played ahead: while a candidate
// is judged, the next ahead-1 the path would judge if it passed, and the
// first ahead/2 if it were taken, are played beside it when their child
// sleeps (sleeps), and the path reads a verdict from them when it reaches
// that schedule.
// The path, the runs counted and the result are shrink's (the verdicts
// are a function of the schedules); a candidate played ahead that the
// path leaves is only a child spent (TestShrinkAheadTakesTheSamePath).
func shrinkAhead(ctx context.Context, s schedule.Schedule, cause string, budget int, play test, ahead int) (Shrunk, error) {
	ctx, cancel := context.WithCancel(ctx)
	j := &judge{ctx: ctx, play: play, m: map[string]*verdictOf{}}
	defer j.wg.Wait()
	defer cancel()
	res := Shrunk{Schedule: s}
	seen := map[string]bool{s.Encode(): true}
	// lo: per count (a candidate's key), the largest value seen to pass,
	// where the next try of that count starts (bisect). It is only where
	// to look: a schedule is 1-minimal by the last pass's plays alone.
	lo := map[string]int{}
	// all: the candidates of res.Schedule under lo, made again only when
	// either changed (making them is the shrinker's own CPU).
	var all []candidate
	dirty := true
	for {
		took, heavy := false, false
		resume := "" // after a count is taken, the place of its next try
		for at := 0; ; {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if dirty {
				all, dirty = candidates(res.Schedule, lo), false
			}
			if resume != "" {
				for i, c := range all {
					if c.key == resume {
						at = i
						break
					}
				}
				resume = ""
			}
			for at < len(all) && seen[all[at].enc] {
				at++
			}
			if at >= len(all) {
				break
			}
			c := all[at]
			w := cost(c.s)
			if res.Weight+w > budget {
				heavy = true // what is left of the budget cannot pay for it
				at++
				continue
			}
			seen[c.enc] = true
			// Play ahead what the path judges next if c passes: the
			// unseen candidates after it that the budget can pay for.
			left := budget - res.Weight - w
			for k, n := at+1, 1; k < len(all) && n < ahead; k++ {
				if d := all[k]; !seen[d.enc] && cost(d.s) <= left {
					if sleeps(d.s) {
						j.start(d.s, d.enc)
					}
					left -= cost(d.s)
					n++
				}
			}
			// And what it judges next if c is taken (a chain of takes
			// is most of a shrink's time when its children sleep): the
			// first candidates of c's schedule from where the path
			// goes on, made now and kept for that path.
			var taken []candidate
			if ahead > 1 && sleeps(c.s) {
				taken = candidates(c.s, lo)
				k := at
				if c.key != "" {
					for i, d := range taken {
						if d.key == c.key {
							k = i
							break
						}
					}
				}
				left := budget - res.Weight - w
				for n := 1; k < len(taken) && n < ahead/2+1; k++ {
					if d := taken[k]; !seen[d.enc] && cost(d.s) <= left {
						if sleeps(d.s) {
							j.start(d.s, d.enc)
						}
						left -= cost(d.s)
						n++
					}
				}
			}
			got, err := j.get(c.s, c.enc)
			if err != nil {
				return res, err
			}
			res.Runs++
			res.Weight += w
			if got != cause {
				if c.key != "" {
					lo[c.key] = max(lo[c.key], c.n)
					dirty = true
				}
				at++
				continue
			}
			res.Schedule, took, dirty = c.s, true, true
			if taken != nil {
				all, dirty = taken, false // lo is as it was when they were made
			}
			res.Steps = append(res.Steps, c.what)
			resume = c.key
		}
		if !took {
			res.Minimal = !heavy
			return res, nil
		}
	}
}

// sleeps reports whether a child of s may wait for much of its time (a
// stall of fd 2's reader, a slow sys.stderr or forwarder): one worth
// playing ahead. A child that does not is tens of ms of CPU, which the
// other causes' children keep busy anyway.
func sleeps(s schedule.Schedule) bool {
	return s.Sink != nil && (s.Sink.FD2.StallMs > 0 || len(s.Sink.FD2.Stalls) > 0 || s.Slowness() > 0)
}

// judge plays schedules at most once each, in the background, and hands
// out their causes by encoding: shrinkAhead's candidates played ahead.
type judge struct {
	ctx  context.Context
	play test
	mu   sync.Mutex
	m    map[string]*verdictOf
	wg   sync.WaitGroup
}

type verdictOf struct {
	done  chan struct{}
	cause string
	err   error
}

func (j *judge) start(s schedule.Schedule, enc string) *verdictOf {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := j.m[enc]
	if v == nil {
		v = &verdictOf{done: make(chan struct{})}
		j.m[enc] = v
		j.wg.Add(1)
		go func() {
			defer j.wg.Done()
			defer close(v.done)
			v.cause, v.err = j.play(j.ctx, s)
		}()
	}
	return v
}

// get is s's cause, played now unless it was played ahead.
func (j *judge) get(s schedule.Schedule, enc string) (string, error) {
	v := j.start(s, enc)
	<-v.done
	return v.cause, v.err
}

// candidate is one change of a schedule; a change of a count names the
// count (key) and its new value (n).
type candidate struct {
	s    schedule.Schedule
	key  string
	n    int
	what string
	enc  string // s.Encode()
}

// Candidates are the schedules one change smaller than s, in the order
// the shrinker tries them (see candidates).
func Candidates(s schedule.Schedule) []schedule.Schedule {
	var out []schedule.Schedule
	for _, c := range candidates(s, nil) {
		out = append(out, c.s)
	}
	return out
}

// candidates are every axis's shrink steps (schedule.Schedule.Steps, in
// their phases: first what makes later runs cheaper, then much at once,
// then whole parts one at a time, then each call's lines and faults, and
// last each count one fewer), each made into schedules: a change is one
// candidate; a count n is tried at 0, then counted up from the largest
// value seen to pass (bisect), and at n-1 after every other candidate.
// Each candidate is valid and inside the contract; every single removal
// is among them, so a schedule none of them fails is 1-minimal.
func candidates(s schedule.Schedule, lo map[string]int) []candidate {
	var out []candidate
	addCount := func(what, key string, n int, change func(c *schedule.Schedule)) {
		c := clone(s)
		change(&c)
		if c.Validate() == nil && c.InContract() == nil {
			out = append(out, candidate{c, key, n, what, c.Encode()})
		}
	}
	// oneFewer: each count's single removal (n-1), tried after every
	// bisection, by when it is mostly a schedule already played.
	var oneFewer []func()
	for _, st := range s.Steps() {
		if st.Set == nil {
			addCount(st.What, "", 0, st.Apply)
			continue
		}
		label := st.Label
		if label == nil {
			label = func(m int) string { return fmt.Sprintf("%s %d -> %d", st.Key, st.N, m) }
		}
		tries := bisect(st.N, lo[st.Key])
		for _, m := range tries {
			addCount(label(m), st.Key, m, func(c *schedule.Schedule) { st.Set(c, m) })
		}
		if m := st.N - 1; m >= 0 && !st.NoOneFewer && !slices.Contains(tries, m) {
			oneFewer = append(oneFewer, func() {
				addCount(label(m), st.Key, m, func(c *schedule.Schedule) { st.Set(c, m) })
			})
		}
	}
	for _, f := range oneFewer {
		f()
	}
	return out
}

// cost is what judging s weighs against a shrink's budget: one child run,
// and one more for each readsPerRun reads of a forwarder. A forwarder that
// reads a byte at a time makes a run of a few hundred long lines take
// seconds where a run takes tens of milliseconds: the budget bounds the
// time a shrink takes, the same way on every machine.
func cost(s schedule.Schedule) int {
	if s.Sink == nil || s.Sink.FD2.Chunk <= 0 {
		return 1
	}
	return 1 + s.MessageBytes()/s.Sink.FD2.Chunk/readsPerRun
}

// readsPerRun: a forwarder's reads that take about as long as a run's
// start (measured: about 20 us a one-byte read, 40 ms a child's start).
const readsPerRun = 2000

// bisect is where a count n is tried next: at 0, then at 1, 2, 4, ...
// above lo, the largest value seen to pass, but never past halfway to n
// (a failure mostly needs a few lines: counting up from below finds them
// in fewer runs than halving down from n).
func bisect(n, lo int) []int {
	var out []int
	next := 1
	if lo >= n {
		lo = 0 // seen to pass in an older schedule: a count now below it starts over
	}
	if lo > 0 {
		next = min(2*lo, lo+(n-lo)/2)
	}
	for _, m := range []int{0, next} {
		if m >= 0 && m < n && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// clone is a deep copy (a schedule is plain data): its JSON read back as
// plain JSON. schedule.Decode reads it the same way (TestCloneIsDecode) but
// strictly, for input from elsewhere: the shrink clones a schedule per
// candidate, and that strict reading was an eighth of a search's CPU.
func clone(s schedule.Schedule) schedule.Schedule {
	var c schedule.Schedule
	if err := json.Unmarshal(s.JSON(), &c); err != nil {
		panic(fmt.Sprintf("a valid schedule does not decode: %v", err))
	}
	return c
}
