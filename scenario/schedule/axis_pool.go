package schedule

import "fmt"

// Pool is the part of a call's work the runtime runs on threads of its own
// (a thread pool running a delegate's partitions): Workers native threads,
// no Python thread state, each of which logs Lines lines of the call's
// size and level, started in order after the call's own lines, while the
// call waits for them holding the GIL (std::thread::join: nothing in the
// wait releases it). A worker's lines are lines outside any call.
type Pool struct {
	Workers int `json:"workers"`
	Lines   int `json:"lines"`
}

// PoolWork is the pool of a call (embedded in Call; nil: none).
type PoolWork struct {
	Pool *Pool `json:"pool,omitempty"`
}

// poolAxis is each top-level call's Pool.
type poolAxis struct{ noAxisPart }

func (poolAxis) Name() string { return "pool" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a poolAxis) Draws() []DrawAt { return []DrawAt{{19, a.draw}} }

func (poolAxis) Validate(k *Sink) error {
	for i, t := range k.Threads {
		for j, c := range t.Calls {
			switch p := c.Pool; {
			case c.Nested != nil && c.Nested.Pool != nil:
				return fmt.Errorf("thread %d call %d: a nested call with a pool (accepted: top-level calls only)", i, j)
			case p == nil:
			case p.Workers < 1 || p.Workers > 4:
				return fmt.Errorf("thread %d call %d: pool workers %d (accepted: 1 to 4)", i, j, p.Workers)
			case p.Lines < 0 || p.Lines > 256:
				return fmt.Errorf("thread %d call %d: pool lines %d (accepted: 0 to 256)", i, j, p.Lines)
			}
		}
	}
	return nil
}

// InContract: a worker's line is a line outside any call, and what logjam
// keeps process-wide for want of room dies with a process that aborts
// without a Fatal line, or meets the full pipe of a stall at the abort
// (docs/CONTRACT.md, "Native workers"; the same edges as the lines a
// destructor logs outside a call).
func (poolAxis) InContract(s Schedule) error {
	k := s.Sink
	if k.poolLines() == 0 || k.Abort == nil {
		return nil
	}
	switch {
	case !k.Abort.Fatal:
		return outside("pool workers' lines before a foreign abort (kept process-wide, they die with it: no fatal path)")
	case k.StallAt(StallAtAbort):
		return outside("pool workers' lines with a stall at the abort (kept process-wide, they meet the full pipe in the fatal path)")
	case k.Stderr.Kind != StderrOriginal:
		return outside("pool workers' lines before an abort with sys.stderr replaced (kept for it, they die with it)")
	}
	return nil
}

func (poolAxis) Faults(k *Sink) int {
	n := 0
	k.eachCall(func(_, _ int, c *Call) { n += b2i(c.Pool != nil) })
	return n
}

func (poolAxis) mostLines(k *Sink) int {
	most := 0
	k.eachCall(func(_, _ int, c *Call) {
		if c.Pool != nil {
			most = max(most, c.Pool.Lines)
		}
	})
	return most
}

func (poolAxis) capLines(k *Sink, m int) {
	k.eachCall(func(_, _ int, c *Call) {
		if c.Pool != nil {
			c.Pool.Lines = min(c.Pool.Lines, m)
		}
	})
}

// lineRuns: each worker's lines, at its call's size.
func (poolAxis) lineRuns(k *Sink, fn func(lines, size int)) {
	k.eachCall(func(_, _ int, c *Call) {
		if c.Pool != nil {
			fn(c.Pool.Workers*c.Pool.Lines, c.Size)
		}
	})
}

func (poolAxis) Steps(s Schedule) []Step {
	var steps []Step
	for i, t := range s.Sink.Threads {
		for j, c := range t.Calls {
			if c.Pool == nil {
				continue
			}
			at := func(c *Schedule) *Call { return &c.Sink.Threads[i].Calls[j] }
			steps = append(steps,
				change(PhasePart, fmt.Sprintf("call %d.%d pool", i, j), func(c *Schedule) { at(c).Pool = nil }),
				count(PhaseDetail, fmt.Sprintf("pool lines %d.%d", i, j), c.Pool.Lines, func(c *Schedule, n int) { at(c).Pool.Lines = n }))
			if c.Pool.Workers > 1 {
				steps = append(steps, change(PhaseDetail, fmt.Sprintf("call %d.%d pool of one", i, j), func(c *Schedule) { at(c).Pool.Workers = 1 }))
			}
		}
	}
	return steps
}

// draw: a call in eight has a pool (when the swarm keeps pools), of 1-4
// workers that log 1-64 lines each; one the contract leaves out is not
// drawn.
func (poolAxis) draw(d Drawer, s *Schedule, _ *drawState) {
	if !d.Bool("swarm: pool threads") {
		return
	}
	k := s.Sink
	for i := range k.Threads {
		for j := range k.Threads[i].Calls {
			if d.IntRange(0, 7, "pool?") > 0 {
				continue
			}
			c := &k.Threads[i].Calls[j]
			c.Pool = &Pool{Workers: d.IntRange(1, 4, "pool workers"), Lines: pick(d, []int{1, 4, 16, 64}, "pool lines")}
			if s.InContract() != nil {
				c.Pool = nil
			}
		}
	}
}

// poolLines counts the lines every pool logs.
func (k *Sink) poolLines() int {
	n := 0
	poolAxis{}.lineRuns(k, func(lines, _ int) { n += lines })
	return n
}
