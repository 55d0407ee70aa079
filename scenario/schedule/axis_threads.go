package schedule

import (
	"fmt"
	"strings"
)

// Thread is one Python thread's calls.
type Thread struct {
	Calls []Call `json:"calls"`
	// Outside: lines this thread logs outside any call (a destructor, GIL
	// held) after its calls, with OutsideText's text (nil: 128 ASCII
	// bytes); the outside axis owns them.
	Outside     int   `json:"outside,omitempty"`
	OutsideText *Text `json:"outside_text,omitempty"`
}

// threadsAxis is Sink.Threads: the Python threads and the binding calls
// they make (Threads[0] is the main thread).
type threadsAxis struct{ noAxisPart }

func (threadsAxis) Name() string { return "threads" }

// Draws: its draws, at their places in the draw order (DrawAt).
func (a threadsAxis) Draws() []DrawAt { return []DrawAt{{9, a.draw}, {17, a.drawAtAbort}} }

func (threadsAxis) Parts(k *Sink) []any { return []any{&k.Threads} }

// Words: how many threads, calls and lines, and what the calls do beyond
// logging.
func (threadsAxis) Words(s Schedule) []string {
	calls, lines := 0, 0
	feats := map[string]int{}
	var order []string
	feat := func(name string) {
		if feats[name] == 0 {
			order = append(order, name)
		}
		feats[name]++
	}
	var walk func(c Call)
	walk = func(c Call) {
		calls++
		lines += c.Lines
		if c.Invalid > 0 {
			feat("invalid UTF-8")
		}
		if c.CJK {
			feat("CJK text")
		}
		if c.Fails {
			feat("raising")
		}
		if c.WaitFor > 0 {
			feat("waiting for another thread")
		}
		if c.Pool != nil {
			feat("with a worker pool")
		}
		if c.Nested != nil {
			feat("nested")
			walk(*c.Nested)
		}
	}
	ts := s.Sink.Threads
	for _, t := range ts {
		for _, c := range t.Calls {
			walk(c)
		}
	}
	w := fmt.Sprintf("%s, %s, %s", Plural(len(ts), "thread"), Plural(calls, "call"), Plural(lines, "line"))
	var fs []string
	for _, f := range order {
		fs = append(fs, fmt.Sprintf("%d %s", feats[f], f))
	}
	if len(fs) > 0 {
		w += " (calls: " + strings.Join(fs, ", ") + ")"
	}
	return []string{w}
}

func (threadsAxis) Validate(k *Sink) error {
	switch {
	case len(k.Threads) < 1 || len(k.Threads) > 4:
		return fmt.Errorf("%d threads (accepted: 1 to 4)", len(k.Threads))
	case len(k.Threads[0].Calls) < 1:
		return fmt.Errorf("the main thread makes at least one call")
	}
	for i, t := range k.Threads {
		if len(t.Calls) > 4 {
			return fmt.Errorf("thread %d: %d calls (accepted: up to 4)", i, len(t.Calls))
		}
		for j, c := range t.Calls {
			if err := c.validate(len(k.Threads)); err != nil {
				return fmt.Errorf("thread %d call %d: %w", i, j, err)
			}
		}
	}
	return nil
}

func (threadsAxis) InContract(s Schedule) error {
	for i, t := range s.Sink.Threads {
		for j, c := range t.Calls {
			if c.WaitFor == i+1 {
				return outside("thread %d call %d waits for itself", i, j)
			}
		}
	}
	return nil
}

// Faults: each thread beyond the main one, each call and its faults.
func (threadsAxis) Faults(k *Sink) int {
	n := len(k.Threads) - 1
	for _, t := range k.Threads {
		for _, c := range t.Calls {
			n += c.faults()
		}
	}
	return n
}

// lineRuns: each call's lines, each nested call's.
func (threadsAxis) lineRuns(k *Sink, fn func(lines, size int)) {
	k.eachCall(func(_, _ int, c *Call) {
		fn(c.Lines, c.Size)
		if c.Nested != nil {
			fn(c.Nested.Lines, c.Nested.Size)
		}
	})
}

func (threadsAxis) mostLines(k *Sink) int {
	most := 0
	for _, t := range k.Threads {
		for _, call := range t.Calls {
			most = max(most, call.Lines)
			if call.Nested != nil {
				most = max(most, call.Nested.Lines)
			}
		}
	}
	return most
}

func (threadsAxis) capLines(k *Sink, m int) {
	k.eachCall(func(_, _ int, call *Call) {
		call.Lines = min(call.Lines, m)
		if call.Nested != nil {
			call.Nested.Lines = min(call.Nested.Lines, m)
		}
	})
}

func (threadsAxis) Steps(s Schedule) []Step {
	k := s.Sink
	steps := []Step{
		change(PhaseCoarse, "main alone", func(c *Schedule) {
			c.Sink.Threads = c.Sink.Threads[:1]
			c.Sink.FD2.Stalls = keepStalls(c.Sink.FD2.Stalls, func(st *Stall) bool {
				st.SigintThread = 0
				return st.At != StallAtLine || st.Thread == 0
			})
			c.Sink.Daemons, c.Sink.Outside, c.Sink.OutsideText = 0, 0, nil
			c.Sink.Threads[0].Outside, c.Sink.Threads[0].OutsideText = 0, nil
			c.Sink.eachCall(func(_, _ int, call *Call) { call.WaitFor = 0 })
		}),
		change(PhaseCoarse, "main's last call", func(c *Schedule) {
			main := c.Sink.Threads[0].Calls
			c.Sink.Threads[0].Calls = main[len(main)-1:]
			c.Sink.FD2.Stalls = keepStalls(c.Sink.FD2.Stalls, func(st *Stall) bool {
				if st.At != StallAtLine || st.Thread != 0 {
					return true
				}
				st.Call -= len(main) - 1
				return st.Call == 0
			})
			if c.Sink.Sigint == SigintLine {
				c.Sink.SigintAt = min(c.Sink.SigintAt, main[len(main)-1].Lines)
			}
		}),
		change(PhaseCoarse, "no call faults", func(c *Schedule) {
			c.Sink.eachCall(func(_, _ int, call *Call) {
				call.Invalid, call.WaitFor, call.Fails, call.FailChars, call.Yield, call.CJK, call.Nested = 0, 0, false, 0, false, false, nil
			})
		}),
	}
	for i := len(k.Threads) - 1; i >= 1; i-- {
		steps = append(steps, change(PhasePart, fmt.Sprintf("thread %d", i), func(c *Schedule) { c.Sink.removeThread(i) }))
	}
	for i, t := range k.Threads {
		for j := len(t.Calls) - 1; j >= 0; j-- {
			steps = append(steps, change(PhasePart, fmt.Sprintf("call %d.%d", i, j), func(c *Schedule) { c.Sink.removeCall(i, j) }))
		}
	}
	for i, t := range k.Threads {
		for j, call := range t.Calls {
			at := func(c *Schedule) *Call { return &c.Sink.Threads[i].Calls[j] }
			detail := func(what string, apply func(c *Schedule)) {
				steps = append(steps, change(PhaseDetail, what, apply))
			}
			steps = append(steps, count(PhaseDetail, fmt.Sprintf("lines %d.%d", i, j), call.Lines, func(c *Schedule, n int) {
				at(c).Lines = n
				for s := range c.Sink.FD2.Stalls {
					if st := &c.Sink.FD2.Stalls[s]; st.At == StallAtLine && st.Thread == i && st.Call == j {
						st.Line = min(st.Line, n)
					}
				}
				if i == 0 && j == 0 && c.Sink.Sigint == SigintLine {
					c.Sink.SigintAt = min(c.Sink.SigintAt, n)
				}
			}))
			detail(fmt.Sprintf("call %d.%d invalid", i, j), func(c *Schedule) { at(c).Invalid = 0 })
			detail(fmt.Sprintf("call %d.%d wait", i, j), func(c *Schedule) { at(c).WaitFor = 0 })
			detail(fmt.Sprintf("call %d.%d fails", i, j), func(c *Schedule) { at(c).Fails, at(c).FailChars = false, 0 })
			detail(fmt.Sprintf("call %d.%d yield", i, j), func(c *Schedule) { at(c).Yield = false })
			detail(fmt.Sprintf("call %d.%d multi-byte", i, j), func(c *Schedule) { at(c).CJK = false })
			if call.Nested != nil {
				detail(fmt.Sprintf("call %d.%d nested", i, j), func(c *Schedule) { at(c).Nested = nil })
				steps = append(steps, count(PhaseDetail, fmt.Sprintf("nested lines %d.%d", i, j), call.Nested.Lines, func(c *Schedule, n int) { at(c).Nested.Lines = n }))
				detail(fmt.Sprintf("nested %d.%d invalid", i, j), func(c *Schedule) { at(c).Nested.Invalid = 0 })
				detail(fmt.Sprintf("nested %d.%d wait", i, j), func(c *Schedule) { at(c).Nested.WaitFor = 0 })
				detail(fmt.Sprintf("nested %d.%d fails", i, j), func(c *Schedule) { at(c).Nested.Fails, at(c).Nested.FailChars = false, 0 })
				detail(fmt.Sprintf("nested %d.%d multi-byte", i, j), func(c *Schedule) { at(c).Nested.CJK = false })
			}
		}
	}
	return steps
}

// eachCall calls f with each call of each thread.
func (k *Sink) eachCall(f func(i, j int, call *Call)) {
	for i := range k.Threads {
		for j := range k.Threads[i].Calls {
			f(i, j, &k.Threads[i].Calls[j])
		}
	}
}

// otherCalls counts the calls of the threads other than the main one.
func (k *Sink) otherCalls() int {
	n := 0
	for _, t := range k.Threads[1:] {
		n += len(t.Calls)
	}
	return n
}

// removeThread drops thread i and renumbers the switch points and stalls
// that name threads after it (one that named it is dropped).
func (k *Sink) removeThread(i int) {
	k.Threads = append(k.Threads[:i:i], k.Threads[i+1:]...)
	k.FD2.Stalls = keepStalls(k.FD2.Stalls, func(st *Stall) bool {
		switch {
		case st.SigintThread == i:
			st.SigintThread = 0 // the SIGINT lands on the main thread's write
		case st.SigintThread > i:
			st.SigintThread--
		}
		if st.At != StallAtLine || st.Thread < i {
			return true
		}
		if st.Thread > i {
			st.Thread--
			return true
		}
		return false
	})
	k.eachCall(func(_, _ int, call *Call) {
		switch w := &call.WaitFor; {
		case *w == i+1:
			*w = 0
		case *w > i+1:
			*w--
		}
	})
}

// removeCall drops call j of thread i and renumbers the stalls at a line
// of a later call of that thread (one at that call is dropped).
func (k *Sink) removeCall(i, j int) {
	k.Threads[i].Calls = append(k.Threads[i].Calls[:j:j], k.Threads[i].Calls[j+1:]...)
	k.FD2.Stalls = keepStalls(k.FD2.Stalls, func(st *Stall) bool {
		if st.At != StallAtLine || st.Thread != i {
			return true
		}
		if st.Call > j {
			st.Call--
			return true
		}
		return st.Call != j
	})
}

// draw: the threads and their calls, once the ending is drawn: at an
// abort, the main thread alone (the threads beside it come last,
// drawAtAbort). The main thread makes at least one call; the others make
// calls only when the swarm keeps other threads' calls.
func (threadsAxis) draw(d Drawer, s *Schedule, st *drawState) {
	k := s.Sink
	n := 1
	if st.ending == "done" {
		n = d.IntRange(1, 4, "threads")
	}
	for i := 0; i < n; i++ {
		least := 0
		if i == 0 {
			least = 1
		}
		calls := 0
		if i == 0 || st.sw.othersCall {
			calls = d.IntRange(least, 3, "calls")
		}
		var th Thread
		for j := 0; j < calls; j++ {
			th.Calls = append(th.Calls, drawCall(d, st.sw, n, i, true))
		}
		k.Threads = append(k.Threads, th)
	}
}

// drawAtAbort draws the threads beside the main one at an abort
// (docs/CONTRACT.md, "Fatal and abort with several threads"): none once in
// four, else 1-3, each with 0-3 calls (none when the swarm leaves other
// threads' calls off) and, before a Fatal line with no
// stall at the abort, maybe lines outside a call after them (kept
// process-wide when fd 2 is busy: the fatal path writes them). They run
// when the main thread lets the GIL go before its last call: between two
// calls (a yield) or while an outermost exit flushes kept lines. They come
// with sys.stderr the original (a replaced one is put back): what their
// calls flush to a replaced one dies with it, and with the main thread's
// only call (all a replaced one allows) they would never run.
func (threadsAxis) drawAtAbort(d Drawer, s *Schedule, st *drawState) {
	k := s.Sink
	if k.Abort == nil {
		return
	}
	n := d.IntRange(1, 4, "threads at the abort")
	if n < 2 {
		return
	}
	k.Stderr = Stderr{Kind: StderrOriginal}
	// The others run only when the main thread lets the GIL go before its
	// aborting call: at least one call before it (with none, the other
	// threads were drawn and never ran), maybe more (appended, so the
	// first call and the calls the stalls name stay; the last one aborts).
	for main := &k.Threads[0]; len(main.Calls) < 4 && (len(main.Calls) < 2 || d.Bool("main call before the abort?")); {
		main.Calls = append(main.Calls, drawCall(d, st.sw, n, 0, true))
	}
	outside := k.Abort.Fatal && !k.StallAt(StallAtAbort)
	for i := 1; i < n; i++ {
		var th Thread
		calls := 0
		if st.sw.othersCall {
			calls = d.IntRange(0, 3, "calls at the abort")
		}
		for j := 0; j < calls; j++ {
			th.Calls = append(th.Calls, drawCall(d, st.sw, n, i, true))
		}
		if outside {
			th.Outside = pick(d, []int{0, 1, 8}, "outside at the abort")
			if th.Outside > 0 {
				th.OutsideText = drawText(d, st.sw)
			}
		}
		k.Threads = append(k.Threads, th)
	}
}
