package schedule

import (
	"fmt"
	"logjam/verdict"

	"logjam/failpoints"
)

// DaemonThreads are daemon threads that log through calls while the
// interpreter exits.
type DaemonThreads struct {
	Daemons int `json:"daemons,omitempty"`
	// GILDroppedMs widens the daemons' exit window: a Python write to
	// sys.__stderr__ holds its line this many ms after it drops the GIL,
	// before write(2) (failpoints.PythonWriteGILDropped; 0: none). A
	// verdict must not move with it.
	GILDroppedMs int `json:"gil_dropped_ms,omitempty"`
}

// daemonsAxis is Sink.DaemonThreads.
type daemonsAxis struct{ noAxisPart }

func (daemonsAxis) Name() string { return "daemons" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a daemonsAxis) Draws() []DrawAt { return []DrawAt{{15, a.draw}} }

func (daemonsAxis) Parts(k *Sink) []any { return []any{&k.DaemonThreads} }

func (daemonsAxis) Words(s Schedule) []string {
	k := s.Sink
	if k.Daemons == 0 {
		return nil
	}
	d := Plural(k.Daemons, "daemon thread")
	if k.GILDroppedMs > 0 {
		d += fmt.Sprintf(" (a write holds its line %d ms after dropping the GIL)", k.GILDroppedMs)
	}
	return []string{d}
}

// FailureWords: a crash with daemons is the exit's.
func (daemonsAxis) FailureWords(s Schedule, v verdict.Verdict) []string {
	if v == verdict.Crash && s.Sink.Daemons > 0 {
		return []string{"daemons"}
	}
	return nil
}

func (daemonsAxis) Validate(k *Sink) error {
	switch {
	case k.Daemons < 0 || k.Daemons > 4:
		return fmt.Errorf("daemons %d (accepted: 0 to 4)", k.Daemons)
	case k.GILDroppedMs < 0 || k.GILDroppedMs > 50:
		return fmt.Errorf("gil_dropped_ms %d (accepted: 0 to 50)", k.GILDroppedMs)
	}
	return nil
}

func (daemonsAxis) InContract(s Schedule) error {
	if k := s.Sink; k.Daemons > 0 && (k.Stderr.Kind == StderrSlow || k.Stderr.Kind == StderrSignalWait) {
		return outside("daemons frozen inside a stream's write that released the GIL")
	}
	return nil
}

func (daemonsAxis) Faults(k *Sink) int { return k.Daemons + b2i(k.GILDroppedMs > 0) }

func (daemonsAxis) Failpoints(k *Sink) failpoints.Set {
	if k.GILDroppedMs == 0 {
		return nil
	}
	return failpoints.Set{{Name: failpoints.PythonWriteGILDropped, Terms: fmt.Sprintf("return(%d)", k.GILDroppedMs)}}
}

func (daemonsAxis) Steps(s Schedule) []Step {
	steps := []Step{count(PhasePart, "daemons", s.Sink.Daemons, func(c *Schedule, n int) { c.Sink.Daemons = n })}
	if s.Sink.GILDroppedMs > 0 {
		steps = append(steps, change(PhasePart, "no widened daemon window", func(c *Schedule) { c.Sink.GILDroppedMs = 0 }))
	}
	return steps
}

// draw: daemons, with no abort, once the lines outside a call are drawn.
// A daemon frozen by finalization inside a stream's write that released
// the GIL (slow, waiting for a signal) never finishes that write: no sink
// can deliver it. The daemons' exit window is widened one time in four: a
// Python write holds its line after it dropped the GIL (the verdict must
// not move).
func (daemonsAxis) draw(d Drawer, s *Schedule, _ *drawState) {
	k := s.Sink
	if k.Abort != nil {
		return
	}
	if k.Stderr.Kind != StderrSlow && k.Stderr.Kind != StderrSignalWait {
		k.Daemons = d.IntRange(0, 4, "daemons")
	}
	if k.Daemons > 0 && d.IntRange(0, 3, "widened daemon window?") == 0 {
		k.GILDroppedMs = 10
	}
}
