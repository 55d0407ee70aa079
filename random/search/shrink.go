package search

import (
	"context"
	"errors"
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
	return shrinkAhead(ctx, s, cause, budget, play, nil)
}

// shrinkAhead is shrink that, with ahead set, also plays the next few
// candidates of the list (those the path would judge next if the one
// being judged does not fail with the cause) beside the one judged, with
// ahead, into a memo of verdicts by schedule; the path then takes a
// verdict from the memo, waiting for it if it is still being played. A
// seed decides a run (the child's barriers), so a verdict played ahead is
// the one the path would have got: the path, the result and the runs
// counted are shrink's, and what changes is only how long the chain of
// children takes, where most of -random's time went (a chain of 40
// children, each with its stalls of 200 or 400 ms, after the search
// itself had ended). A verdict played ahead that the path never asks for
// costs CPU only; ahead should use slots nothing else waits for.
func shrinkAhead(ctx context.Context, s schedule.Schedule, cause string, budget int, play test, ahead aheadTest) (Shrunk, error) {
	if ahead != nil {
		m := newMemo(ctx, play, ahead)
		defer m.close()
		play = m.judge
		defer func() { m.want(nil) }()
		return shrinkWith(ctx, s, cause, budget, play, m)
	}
	return shrinkWith(ctx, s, cause, budget, play, nil)
}

// aheadTest plays a candidate ahead; still says, once it may start a
// child, whether the path still wants it (else it returns errDropped).
type aheadTest func(ctx context.Context, s schedule.Schedule, still func() bool) (string, error)

// lookahead is how many candidates past the one judged are played ahead.
const lookahead = 3

func shrinkWith(ctx context.Context, s schedule.Schedule, cause string, budget int, play test, m *memo) (Shrunk, error) {
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
			if m != nil {
				var next []candidate
				for j := at + 1; j < len(all) && len(next) < lookahead; j++ {
					if !seen[all[j].enc] && res.Weight+w+cost(all[j].s) <= budget {
						next = append(next, all[j])
					}
				}
				m.want(next)
			}
			got, err := play(ctx, c.s)
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
			res.Steps = append(res.Steps, c.what)
			resume = c.key
		}
		if !took {
			res.Minimal = !heavy
			return res, nil
		}
	}
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

// clone is a deep copy (a schedule is plain data).
func clone(s schedule.Schedule) schedule.Schedule {
	c, err := schedule.Decode(string(s.JSON()))
	if err != nil {
		panic(fmt.Sprintf("a valid schedule does not decode: %v", err))
	}
	return c
}

// memo holds the verdicts of candidates played ahead (shrinkAhead).
type memo struct {
	ctx    context.Context
	cancel context.CancelFunc
	play   test
	ahead  aheadTest
	wg     sync.WaitGroup

	mu     sync.Mutex
	calls  map[string]*memoCall
	wanted map[string]bool
}

type memoCall struct {
	done chan struct{}
	got  string
	err  error
}

func newMemo(ctx context.Context, play test, ahead aheadTest) *memo {
	ctx, cancel := context.WithCancel(ctx)
	return &memo{ctx: ctx, cancel: cancel, play: play, ahead: ahead, calls: map[string]*memoCall{}}
}

// want starts playing the candidates not yet played or under way; one
// asked before whose turn is gone is dropped if it has not started.
func (m *memo) want(cs []candidate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wanted = map[string]bool{}
	for _, c := range cs {
		m.wanted[c.enc] = true
		if m.calls[c.enc] != nil {
			continue
		}
		call := &memoCall{done: make(chan struct{})}
		m.calls[c.enc] = call
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer close(call.done)
			call.got, call.err = m.ahead(m.ctx, c.s, func() bool { return m.stillWanted(c.enc) })
		}()
	}
}

// stillWanted is asked by ahead once it holds its slot: a candidate the
// path moved past is not played.
func (m *memo) stillWanted(enc string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.wanted[enc]
}

// judge is the path's play: a verdict played ahead if there is one (or
// under way), else a play of its own. One played ahead that was dropped
// or cut short is played again.
func (m *memo) judge(ctx context.Context, s schedule.Schedule) (string, error) {
	enc := s.Encode()
	m.mu.Lock()
	call := m.calls[enc]
	m.mu.Unlock()
	if call != nil {
		select {
		case <-call.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if call.err == nil {
			return call.got, nil
		}
	}
	return m.play(ctx, s)
}

// close ends what is still played ahead and waits for it: no child
// outlives the shrink.
func (m *memo) close() {
	m.cancel()
	m.wg.Wait()
}

// errDropped is ahead's answer for a candidate the path moved past before
// a slot was free: not played, so judge plays it if it is ever asked.
var errDropped = errors.New("played ahead no more: the shrink moved past it")
