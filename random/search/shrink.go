package search

import (
	"context"
	"fmt"
	"slices"

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

// candidates: first a few changes that remove much at once (every count
// of lines capped at once; a forwarder's one-byte reads made whole-pipe
// reads; every thread but main with the daemons and the lines outside
// calls; every call of main but its last; every call's faults; the
// signals; the simplest profile), then whole parts one at a time (the
// ending, each thread, each call, daemons, lines outside calls, fd 2's and
// sys.stderr's faults, signals), then each call's lines and faults, and
// last each count one fewer. A count n is tried at 0, then counted up from
// the largest value seen to pass (bisect); the profile is not a fault: it
// is simplified only at once, above. Each candidate is valid and inside
// the contract; every single removal is among them, so a schedule none of
// them fails is 1-minimal.
func candidates(s schedule.Schedule, lo map[string]int) []candidate {
	var out []candidate
	addCount := func(what, key string, n int, change func(c *schedule.Schedule)) {
		c := clone(s)
		change(&c)
		if c.Validate() == nil && c.InContract() == nil {
			out = append(out, candidate{c, key, n, what, c.Encode()})
		}
	}
	add := func(what string, change func(c *schedule.Schedule)) { addCount(what, "", 0, change) }
	// oneFewer: each count's single removal (n-1), tried after every
	// bisection, by when it is mostly a schedule already played.
	var oneFewer []func()
	counts := func(key string, n int, set func(c *schedule.Schedule, n int)) {
		tries := bisect(n, lo[key])
		for _, m := range tries {
			addCount(fmt.Sprintf("%s %d -> %d", key, n, m), key, m, func(c *schedule.Schedule) { set(c, m) })
		}
		if m := n - 1; m >= 0 && !slices.Contains(tries, m) {
			oneFewer = append(oneFewer, func() {
				addCount(fmt.Sprintf("%s %d -> %d", key, n, m), key, m, func(c *schedule.Schedule) { set(c, m) })
			})
		}
	}
	if s.Lazy != nil {
		add("no race", func(c *schedule.Schedule) { c.Lazy.Race = false })
		for i := range s.Lazy.Ops {
			add(fmt.Sprintf("op %d", i), func(c *schedule.Schedule) { c.Lazy.Ops = append(c.Lazy.Ops[:i:i], c.Lazy.Ops[i+1:]...) })
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
	most := k.Outside
	for _, t := range k.Threads {
		most = max(most, t.Outside)
		for _, call := range t.Calls {
			most = max(most, call.Lines)
			if call.Nested != nil {
				most = max(most, call.Nested.Lines)
			}
		}
	}
	for _, m := range bisect(most, lo[atMost]) {
		addCount(fmt.Sprintf("at most %d lines a call", m), atMost, m, func(c *schedule.Schedule) {
			eachCall(c, func(_, _ int, call *schedule.Call) {
				call.Lines = min(call.Lines, m)
				if call.Nested != nil {
					call.Nested.Lines = min(call.Nested.Lines, m)
				}
			})
			for s := range c.Sink.FD2.Stalls {
				c.Sink.FD2.Stalls[s].Line = min(c.Sink.FD2.Stalls[s].Line, m)
			}
			c.Sink.SigintAt = min(c.Sink.SigintAt, m)
			c.Sink.Outside = min(c.Sink.Outside, m)
			for i := range c.Sink.Threads {
				c.Sink.Threads[i].Outside = min(c.Sink.Threads[i].Outside, m)
			}
		})
	}
	if f := k.FD2; f.Chunk > 0 && f.Chunk < f.Capacity {
		// One byte a read is a schedule's slowest part by far: read all
		// the pipe holds, unless the failure needs the small reads.
		add("the forwarder reads the whole pipe", func(c *schedule.Schedule) { c.Sink.FD2.Chunk = c.Sink.FD2.Capacity })
	}
	add("main alone", func(c *schedule.Schedule) {
		c.Sink.Threads = c.Sink.Threads[:1]
		c.Sink.FD2.Stalls = renumberStalls(c.Sink.FD2.Stalls, func(st *schedule.Stall) bool {
			st.SigintThread = 0
			return st.At != schedule.StallAtLine || st.Thread == 0
		})
		c.Sink.Daemons, c.Sink.Outside, c.Sink.OutsideText = 0, 0, nil
		c.Sink.Threads[0].Outside, c.Sink.Threads[0].OutsideText = 0, nil
		eachCall(c, func(_, _ int, call *schedule.Call) { call.WaitFor = 0 })
	})
	add("main's last call", func(c *schedule.Schedule) {
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
	add("no call faults", func(c *schedule.Schedule) {
		eachCall(c, func(_, _ int, call *schedule.Call) {
			call.Invalid, call.WaitFor, call.Fails, call.FailChars, call.Yield, call.CJK, call.Nested = 0, 0, false, 0, false, false, nil
		})
	})
	add("no signals", func(c *schedule.Schedule) { c.Sink.Sigint, c.Sink.SigintAt, c.Sink.SigintIgnored = "", 0, false })
	add("simplest profile", func(c *schedule.Schedule) { c.Platform, c.Python, c.Buffering = "linux", "3.12", "" })
	// One part at a time.
	add("no abort", func(c *schedule.Schedule) { c.Sink.Abort = nil })
	for i := len(k.Threads) - 1; i >= 1; i-- {
		add(fmt.Sprintf("thread %d", i), func(c *schedule.Schedule) { removeThread(c.Sink, i) })
	}
	for i, t := range k.Threads {
		for j := len(t.Calls) - 1; j >= 0; j-- {
			add(fmt.Sprintf("call %d.%d", i, j), func(c *schedule.Schedule) {
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
		add("no widened daemon window", func(c *schedule.Schedule) { c.Sink.GILDroppedMs = 0 })
	}
	counts("outside", k.Outside, func(c *schedule.Schedule, n int) { c.Sink.Outside = n })
	texts := func(what string, at func(c *schedule.Schedule) **schedule.Text) {
		if *at(&s) == nil {
			return
		}
		add(what+" text", func(c *schedule.Schedule) { *at(c) = nil })
		add(what+" multi-byte", func(c *schedule.Schedule) { (*at(c)).CJK = false })
		add(what+" invalid bytes", func(c *schedule.Schedule) { (*at(c)).Invalid = 0 })
	}
	texts("outside", func(c *schedule.Schedule) **schedule.Text { return &c.Sink.OutsideText })
	for i, t := range k.Threads {
		counts(fmt.Sprintf("outside %d", i), t.Outside, func(c *schedule.Schedule, n int) { c.Sink.Threads[i].Outside = n })
		texts(fmt.Sprintf("outside %d", i), func(c *schedule.Schedule) **schedule.Text { return &c.Sink.Threads[i].OutsideText })
	}
	add("no SIGINT", func(c *schedule.Schedule) { c.Sink.Sigint, c.Sink.SigintAt = "", 0 })
	add("SIGINT not ignored", func(c *schedule.Schedule) { c.Sink.SigintIgnored = false })
	add("original sys.stderr", func(c *schedule.Schedule) { c.Sink.Stderr = schedule.Stderr{Kind: schedule.StderrOriginal} })
	add("no stall", func(c *schedule.Schedule) { c.Sink.FD2.StallMs = 0 })
	for i, st := range k.FD2.Stalls {
		add(fmt.Sprintf("stall %d", i), func(c *schedule.Schedule) {
			c.Sink.FD2.Stalls = append(c.Sink.FD2.Stalls[:i:i], c.Sink.FD2.Stalls[i+1:]...)
		})
		if st.Sigint {
			add(fmt.Sprintf("stall %d SIGINT", i), func(c *schedule.Schedule) {
				st := &c.Sink.FD2.Stalls[i]
				st.Sigint, st.Twice, st.SigintThread = false, false, 0
			})
		}
		if st.Twice {
			add(fmt.Sprintf("stall %d second Ctrl-C", i), func(c *schedule.Schedule) { c.Sink.FD2.Stalls[i].Twice = false })
		}
		if st.SigintThread > 0 {
			add(fmt.Sprintf("stall %d SIGINT on main", i), func(c *schedule.Schedule) { c.Sink.FD2.Stalls[i].SigintThread = 0 })
		}
	}
	add("fd 2 a file", func(c *schedule.Schedule) {
		c.Sink.FD2 = schedule.FD2{Kind: schedule.FD2File, Errors: c.Sink.FD2.Errors}
	})
	if e := k.FD2.Errors; e != nil {
		add("no fd-2 errors", func(c *schedule.Schedule) { c.Sink.FD2.Errors = nil })
		if e.Times != 1 {
			add("fd-2 error once", func(c *schedule.Schedule) { c.Sink.FD2.Errors.Times = 1 })
		}
		counts("fd-2 errors after", e.After, func(c *schedule.Schedule, n int) { c.Sink.FD2.Errors.After = n })
	}
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
			add(fmt.Sprintf("call %d.%d invalid", i, j), func(c *schedule.Schedule) { at(c).Invalid = 0 })
			add(fmt.Sprintf("call %d.%d wait", i, j), func(c *schedule.Schedule) { at(c).WaitFor = 0 })
			add(fmt.Sprintf("call %d.%d fails", i, j), func(c *schedule.Schedule) { at(c).Fails, at(c).FailChars = false, 0 })
			add(fmt.Sprintf("call %d.%d yield", i, j), func(c *schedule.Schedule) { at(c).Yield = false })
			add(fmt.Sprintf("call %d.%d multi-byte", i, j), func(c *schedule.Schedule) { at(c).CJK = false })
			if call.Nested != nil {
				add(fmt.Sprintf("call %d.%d nested", i, j), func(c *schedule.Schedule) { at(c).Nested = nil })
				counts(fmt.Sprintf("nested lines %d.%d", i, j), call.Nested.Lines, func(c *schedule.Schedule, n int) { at(c).Nested.Lines = n })
				add(fmt.Sprintf("nested %d.%d invalid", i, j), func(c *schedule.Schedule) { at(c).Nested.Invalid = 0 })
				add(fmt.Sprintf("nested %d.%d wait", i, j), func(c *schedule.Schedule) { at(c).Nested.WaitFor = 0 })
				add(fmt.Sprintf("nested %d.%d fails", i, j), func(c *schedule.Schedule) { at(c).Nested.Fails, at(c).Nested.FailChars = false, 0 })
				add(fmt.Sprintf("nested %d.%d multi-byte", i, j), func(c *schedule.Schedule) { at(c).Nested.CJK = false })
			}
		}
	}
	if k.Abort != nil {
		counts("after", k.Abort.After, func(c *schedule.Schedule, n int) { c.Sink.Abort.After = n })
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

// atMost is the key of the cap on every count of lines at once.
const atMost = "at most"

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
