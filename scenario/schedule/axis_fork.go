package schedule

import "fmt"

// Fork is an os.fork() of the main thread once it has joined every other
// thread and logged its lines outside any call (row D5's shape): Held, a
// native thread of the runtime holds the sink's own locks (as while it
// keeps a line outside any call) until the fork has begun; the child makes
// one binding call that logs Lines lines of 128 bytes and ends with
// os._exit(0); the parent waits for it (os.waitpid) and goes on.
type Fork struct {
	Held  bool `json:"held,omitempty"`
	Lines int  `json:"lines"`
}

// ForkPart is a schedule's fork (embedded in Sink; nil: none).
type ForkPart struct {
	Fork *Fork `json:"fork,omitempty"`
}

// forkAxis is Sink.Fork.
type forkAxis struct{ noAxisPart }

func (forkAxis) Name() string { return "fork" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a forkAxis) Draws() []DrawAt { return []DrawAt{{22, a.draw}} }

func (forkAxis) Parts(k *Sink) []any { return []any{&k.ForkPart} }

func (forkAxis) Words(s Schedule) []string {
	f := s.Sink.Fork
	if f == nil {
		return nil
	}
	w := fmt.Sprintf("a fork whose child logs %s", Plural(f.Lines, "line"))
	if f.Held {
		w += ", the sink's locks held"
	}
	return []string{w}
}

// Validate: what the model cannot play right is refused (sim.Runtime.Fork):
// its child shares the parent's GIL, which a forwarder of fd 2 needs
// while the child writes to its pipe; the child's copy of an in-memory
// sys.stderr is the parent's object there; and a run whose main thread
// aborts in its last call never forks.
func (forkAxis) Validate(k *Sink) error {
	f := k.Fork
	switch {
	case f == nil:
	case f.Lines < 0 || f.Lines > 64:
		return fmt.Errorf("fork lines %d (accepted: 0 to 64)", f.Lines)
	case k.FD2.forwarded():
		return fmt.Errorf("fork with fd2 %s (the model's child would hold the GIL the forwarder needs: not modelled)", k.FD2.Kind)
	case k.Stderr.Kind != StderrOriginal:
		return fmt.Errorf("fork with stderr %s (the child's copy of a replaced sys.stderr is the parent's object in the model: not modelled)", k.Stderr.Kind)
	case k.Abort != nil:
		return fmt.Errorf("fork with an abort (the main thread's last call aborts: it never forks)")
	}
	return nil
}

func (forkAxis) Faults(k *Sink) int {
	if k.Fork == nil {
		return 0
	}
	return 1 + b2i(k.Fork.Held)
}

func (forkAxis) mostLines(k *Sink) int {
	if k.Fork == nil {
		return 0
	}
	return k.Fork.Lines
}

func (forkAxis) capLines(k *Sink, m int) {
	if k.Fork != nil {
		k.Fork.Lines = min(k.Fork.Lines, m)
	}
}

// lineRuns: the child's call's lines, 128 bytes each.
func (forkAxis) lineRuns(k *Sink, fn func(lines, size int)) {
	if k.Fork != nil {
		fn(k.Fork.Lines, 128)
	}
}

func (forkAxis) Steps(s Schedule) []Step {
	f := s.Sink.Fork
	if f == nil {
		return nil
	}
	steps := []Step{
		change(PhasePart, "no fork", func(c *Schedule) { c.Sink.Fork = nil }),
		count(PhaseDetail, "fork lines", f.Lines, func(c *Schedule, n int) { c.Sink.Fork.Lines = n }),
	}
	if f.Held {
		steps = append(steps, change(PhaseDetail, "fork with nothing held", func(c *Schedule) { c.Sink.Fork.Held = false }))
	}
	return steps
}

// draw: a run that may fork (the original sys.stderr, fd 2 drained by no
// forwarder, no abort) forks one time in four, with the sink's locks held
// at the fork one time in two, the child logging 0, 1, 4 or 16 lines.
func (forkAxis) draw(d Drawer, s *Schedule, _ *drawState) {
	k := s.Sink
	if k.FD2.forwarded() || k.Stderr.Kind != StderrOriginal || k.Abort != nil {
		return
	}
	if d.IntRange(0, 3, "fork?") > 0 {
		return
	}
	k.Fork = &Fork{Held: d.Bool("fork: locks held"), Lines: pick(d, []int{0, 1, 4, 16}, "fork lines")}
	if s.Validate() != nil || s.InContract() != nil {
		k.Fork = nil
	}
}
