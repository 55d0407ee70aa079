package search

import (
	"context"
	"fmt"
	"sync"

	"logjam/scenario/schedule"
)

// Shrunk is a failure's smallest schedule found.
type Shrunk struct {
	Schedule schedule.Schedule
	// Runs: the child runs spent (candidates and confirmations).
	Runs int
	// Minimal: a whole pass over the single removals (every fault, thread,
	// call, line) found none that still fails the same way: the schedule
	// is 1-minimal. False when the budget ran out first.
	Minimal bool
}

// shrinkBatch is how many candidates of one failure are played at once. It
// is a constant, not the number of children the machine runs at a time, so
// the runs spent (and where the budget stops) are the same on every
// machine. One: the children run side by side across the causes
// (PrintFailures), and a batch's candidates after the one taken are runs
// wasted.
const shrinkBatch = 1

// test plays one schedule and returns its failure's cause ("" for a pass).
type test func(ctx context.Context, s schedule.Schedule) (string, error)

// Shrink makes s, which failed with cause, smaller while it still fails
// with the same cause: greedy passes over a fixed list of changes, each
// removing or simplifying one thing (biggest first: an abort, a thread, a
// call, half a call's lines; last: one line), until a pass accepts none
// (the result is 1-minimal) or budget child runs are spent. It is
// deterministic: candidates come in a fixed order, shrinkBatch at a time,
// and the first of a batch (in order) that fails is taken, whatever
// finished first. Each distinct schedule is played at most once (the
// shrinker remembers every encoding it played). Only a failure whose
// replay failed the same way is shrunk (PrintFailures), so the path
// depends on the verdicts alone, which the child's barriers and seeds
// decide.
func (r Runner) Shrink(ctx context.Context, s schedule.Schedule, cause string, budget int) (Shrunk, error) {
	play := func(ctx context.Context, c schedule.Schedule) (string, error) {
		out, err := r.Run(ctx, c)
		if err != nil {
			return "", err
		}
		return Cause(c, out), nil
	}
	return shrink(ctx, s, cause, budget, play)
}

func shrink(ctx context.Context, s schedule.Schedule, cause string, budget int, play test) (Shrunk, error) {
	res := Shrunk{Schedule: s}
	seen := map[string]bool{s.Encode(): true}
	// lo: per count (a candidate's key), the largest value seen to pass,
	// so that the next try of that count halves what is left above it.
	lo := map[string]int{}
	// first plays a batch side by side and returns the first, in order,
	// that failed with the cause (-1: none).
	first := func(batch []candidate) (int, error) {
		got := make([]string, len(batch))
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		for i, c := range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = play(ctx, c.s)
			}()
		}
		wg.Wait()
		res.Runs += len(batch)
		for i := range batch {
			if errs[i] != nil {
				return -1, errs[i]
			}
			if got[i] == cause {
				return i, nil
			}
		}
		return -1, nil
	}
	for {
		accepted := false
		for at := 0; ; {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			all := candidates(res.Schedule, lo)
			if at >= len(all) {
				break
			}
			var batch []candidate
			var index []int
			for i := at; i < len(all) && len(batch) < shrinkBatch; i++ {
				at = i + 1
				if enc := all[i].s.Encode(); !seen[enc] {
					seen[enc] = true
					batch = append(batch, all[i])
					index = append(index, i)
				}
			}
			if len(batch) == 0 {
				continue
			}
			if res.Runs+len(batch) > budget {
				return res, nil
			}
			j, err := first(batch)
			if err != nil {
				return res, err
			}
			for b, c := range batch {
				if (j < 0 || b < j) && c.key != "" {
					lo[c.key] = max(lo[c.key], c.n)
				}
			}
			if j >= 0 {
				res.Schedule, accepted = batch[j].s, true
				// The next candidates are the new schedule's, from the same
				// place in the list.
				at = index[j]
			}
		}
		if !accepted {
			res.Minimal = true
			return res, nil
		}
	}
}

// candidate is one change of a schedule; a change of a count names the
// count (key) and its new value (n).
type candidate struct {
	s   schedule.Schedule
	key string
	n   int
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

// candidates: first a few changes that remove much at once (every thread
// but main with the daemons and the lines outside calls; every call of
// main but its last; every call's faults; half of every call's lines;
// the signals; the simplest profile), then whole parts one at a time (the
// ending, each thread, each call, daemons, lines outside calls, fd 2's and
// sys.stderr's faults, signals), then each call's lines and faults (the
// profile is not a fault: it is simplified only at once, above). A count n is tried at 0, halfway
// between the largest value seen to pass (lo) and n, and n-1. Each
// candidate is valid and inside the contract; every single removal is
// among them, so a schedule none of them fails is 1-minimal.
func candidates(s schedule.Schedule, lo map[string]int) []candidate {
	var out []candidate
	addCount := func(key string, n int, change func(c *schedule.Schedule)) {
		c := clone(s)
		change(&c)
		if c.Validate() == nil && c.InContract() == nil {
			out = append(out, candidate{c, key, n})
		}
	}
	add := func(change func(c *schedule.Schedule)) { addCount("", 0, change) }
	counts := func(key string, n int, set func(c *schedule.Schedule, n int)) {
		for _, m := range []int{0, lo[key] + (n-lo[key])/2, n - 1} {
			if m >= 0 && m < n {
				addCount(key, m, func(c *schedule.Schedule) { set(c, m) })
			}
		}
	}
	if s.Lazy != nil {
		add(func(c *schedule.Schedule) { c.Lazy.Race = false })
		for i := range s.Lazy.Ops {
			add(func(c *schedule.Schedule) { c.Lazy.Ops = append(c.Lazy.Ops[:i:i], c.Lazy.Ops[i+1:]...) })
		}
		return out
	}
	k := s.Sink
	eachCall := func(c *schedule.Schedule, f func(i, j int, call *schedule.Call)) {
		for i := range c.Sink.Threads {
			for j := range c.Sink.Threads[i].Calls {
				f(i, j, &c.Sink.Threads[i].Calls[j])
			}
		}
	}
	// Much at once.
	add(func(c *schedule.Schedule) {
		c.Sink.Threads = c.Sink.Threads[:1]
		c.Sink.FD2.Stalls = renumberStalls(c.Sink.FD2.Stalls, func(st *schedule.Stall) bool {
			st.SigintThread = 0
			return st.At != schedule.StallAtLine || st.Thread == 0
		})
		c.Sink.Daemons, c.Sink.Outside, c.Sink.OutsideText = 0, 0, nil
		c.Sink.Threads[0].Outside, c.Sink.Threads[0].OutsideText = 0, nil
		eachCall(c, func(_, _ int, call *schedule.Call) { call.WaitFor = 0 })
	})
	add(func(c *schedule.Schedule) {
		main := c.Sink.Threads[0].Calls
		c.Sink.Threads[0].Calls = main[len(main)-1:]
		c.Sink.FD2.Stalls = renumberStalls(c.Sink.FD2.Stalls, func(st *schedule.Stall) bool {
			if st.At != schedule.StallAtLine || st.Thread != 0 {
				return true
			}
			st.Call -= len(main) - 1
			return st.Call == 0
		})
		if c.Sink.Sigint == schedule.SigintLine {
			c.Sink.SigintAt = min(c.Sink.SigintAt, main[len(main)-1].Lines)
		}
	})
	add(func(c *schedule.Schedule) {
		eachCall(c, func(_, _ int, call *schedule.Call) {
			call.Invalid, call.WaitFor, call.Fails, call.FailChars, call.Yield, call.CJK, call.Nested = 0, 0, false, 0, false, false, nil
		})
	})
	add(func(c *schedule.Schedule) {
		eachCall(c, func(i, j int, call *schedule.Call) { call.Lines /= 2 })
		for s := range c.Sink.FD2.Stalls {
			c.Sink.FD2.Stalls[s].Line /= 2
		}
		c.Sink.SigintAt /= 2
		c.Sink.Outside /= 2
		for i := range c.Sink.Threads {
			c.Sink.Threads[i].Outside /= 2
		}
	})
	add(func(c *schedule.Schedule) { c.Sink.Sigint, c.Sink.SigintAt, c.Sink.SigintIgnored = "", 0, false })
	add(func(c *schedule.Schedule) { c.Platform, c.Python, c.Buffering = "linux", "3.12", "" })
	// One part at a time.
	add(func(c *schedule.Schedule) { c.Sink.Abort = nil })
	for i := len(k.Threads) - 1; i >= 1; i-- {
		add(func(c *schedule.Schedule) { removeThread(c.Sink, i) })
	}
	for i, t := range k.Threads {
		for j := len(t.Calls) - 1; j >= 0; j-- {
			add(func(c *schedule.Schedule) {
				c.Sink.Threads[i].Calls = append(c.Sink.Threads[i].Calls[:j:j], c.Sink.Threads[i].Calls[j+1:]...)
				c.Sink.FD2.Stalls = renumberStalls(c.Sink.FD2.Stalls, func(st *schedule.Stall) bool {
					if st.At != schedule.StallAtLine || st.Thread != i {
						return true
					}
					if st.Call > j {
						st.Call--
						return true
					}
					return st.Call != j
				})
			})
		}
	}
	counts("daemons", k.Daemons, func(c *schedule.Schedule, n int) { c.Sink.Daemons = n })
	if k.GILDroppedMs > 0 {
		add(func(c *schedule.Schedule) { c.Sink.GILDroppedMs = 0 })
	}
	counts("outside", k.Outside, func(c *schedule.Schedule, n int) { c.Sink.Outside = n })
	texts := func(at func(c *schedule.Schedule) **schedule.Text) {
		if *at(&s) == nil {
			return
		}
		add(func(c *schedule.Schedule) { *at(c) = nil })
		add(func(c *schedule.Schedule) { (*at(c)).CJK = false })
		add(func(c *schedule.Schedule) { (*at(c)).Invalid = 0 })
	}
	texts(func(c *schedule.Schedule) **schedule.Text { return &c.Sink.OutsideText })
	for i, t := range k.Threads {
		counts(fmt.Sprintf("outside %d", i), t.Outside, func(c *schedule.Schedule, n int) { c.Sink.Threads[i].Outside = n })
		texts(func(c *schedule.Schedule) **schedule.Text { return &c.Sink.Threads[i].OutsideText })
	}
	add(func(c *schedule.Schedule) { c.Sink.Sigint, c.Sink.SigintAt = "", 0 })
	add(func(c *schedule.Schedule) { c.Sink.SigintIgnored = false })
	add(func(c *schedule.Schedule) { c.Sink.Stderr = schedule.Stderr{Kind: schedule.StderrOriginal} })
	add(func(c *schedule.Schedule) { c.Sink.FD2.StallMs = 0 })
	for i, st := range k.FD2.Stalls {
		add(func(c *schedule.Schedule) {
			c.Sink.FD2.Stalls = append(c.Sink.FD2.Stalls[:i:i], c.Sink.FD2.Stalls[i+1:]...)
		})
		if st.Sigint {
			add(func(c *schedule.Schedule) {
				st := &c.Sink.FD2.Stalls[i]
				st.Sigint, st.Twice, st.SigintThread = false, false, 0
			})
		}
		if st.Twice {
			add(func(c *schedule.Schedule) { c.Sink.FD2.Stalls[i].Twice = false })
		}
		if st.SigintThread > 0 {
			add(func(c *schedule.Schedule) { c.Sink.FD2.Stalls[i].SigintThread = 0 })
		}
	}
	add(func(c *schedule.Schedule) { c.Sink.FD2 = schedule.FD2{Kind: schedule.FD2File} })
	for i, t := range k.Threads {
		for j, call := range t.Calls {
			at := func(c *schedule.Schedule) *schedule.Call { return &c.Sink.Threads[i].Calls[j] }
			counts(fmt.Sprintf("lines %d.%d", i, j), call.Lines, func(c *schedule.Schedule, n int) {
				at(c).Lines = n
				for s := range c.Sink.FD2.Stalls {
					if st := &c.Sink.FD2.Stalls[s]; st.At == schedule.StallAtLine && st.Thread == i && st.Call == j {
						st.Line = min(st.Line, n)
					}
				}
				if i == 0 && j == 0 && c.Sink.Sigint == schedule.SigintLine {
					c.Sink.SigintAt = min(c.Sink.SigintAt, n)
				}
			})
			add(func(c *schedule.Schedule) { at(c).Invalid = 0 })
			add(func(c *schedule.Schedule) { at(c).WaitFor = 0 })
			add(func(c *schedule.Schedule) { at(c).Fails, at(c).FailChars = false, 0 })
			add(func(c *schedule.Schedule) { at(c).Yield = false })
			add(func(c *schedule.Schedule) { at(c).CJK = false })
			if call.Nested != nil {
				add(func(c *schedule.Schedule) { at(c).Nested = nil })
				counts(fmt.Sprintf("nested lines %d.%d", i, j), call.Nested.Lines, func(c *schedule.Schedule, n int) { at(c).Nested.Lines = n })
				add(func(c *schedule.Schedule) { at(c).Nested.Invalid = 0 })
				add(func(c *schedule.Schedule) { at(c).Nested.WaitFor = 0 })
				add(func(c *schedule.Schedule) { at(c).Nested.Fails, at(c).Nested.FailChars = false, 0 })
				add(func(c *schedule.Schedule) { at(c).Nested.CJK = false })
			}
		}
	}
	if k.Abort != nil {
		counts("after", k.Abort.After, func(c *schedule.Schedule, n int) { c.Sink.Abort.After = n })
	}
	return out
}

// removeThread drops thread i and renumbers the switch points and stalls
// that name threads after it (one that named it is dropped).
func removeThread(k *schedule.Sink, i int) {
	k.Threads = append(k.Threads[:i:i], k.Threads[i+1:]...)
	k.FD2.Stalls = renumberStalls(k.FD2.Stalls, func(st *schedule.Stall) bool {
		switch {
		case st.SigintThread == i:
			st.SigintThread = 0 // the SIGINT lands on the main thread's write
		case st.SigintThread > i:
			st.SigintThread--
		}
		if st.At != schedule.StallAtLine || st.Thread < i {
			return true
		}
		if st.Thread > i {
			st.Thread--
			return true
		}
		return false
	})
	for a := range k.Threads {
		for b := range k.Threads[a].Calls {
			w := &k.Threads[a].Calls[b].WaitFor
			switch {
			case *w == i+1:
				*w = 0
			case *w > i+1:
				*w--
			}
		}
	}
}

// renumberStalls keeps the stalls keep reports true for (it may renumber
// their marks); nil when none is left, as a schedule without stalls has.
func renumberStalls(stalls []schedule.Stall, keep func(st *schedule.Stall) bool) []schedule.Stall {
	var out []schedule.Stall
	for _, st := range stalls {
		if keep(&st) {
			out = append(out, st)
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
