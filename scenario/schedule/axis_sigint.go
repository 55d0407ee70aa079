package schedule

import (
	"fmt"

	"logjam/scenario"
)

// Interrupts are the Ctrl-Cs of a schedule that no stall sends (a stall's
// own SIGINT is the stalls axis's): SigintIgnored, the child starts with
// SIGINT ignored (`cmd &`); Sigint, a real SIGINT from the parent: ""
// none, SigintLine after line SigintAt of the main thread's first call,
// SigintBlocked when the main thread is the first to block on a stalled
// fd 2 (a pipe).
type Interrupts struct {
	SigintIgnored bool   `json:"sigint_ignored,omitempty"`
	Sigint        string `json:"sigint,omitempty"`
	SigintAt      int    `json:"sigint_at,omitempty"`
}

// The SIGINT moments.
const (
	SigintLine    = "line"
	SigintBlocked = "blocked-write"
)

// sigintAxis is Sink.Interrupts.
type sigintAxis struct{ noAxisPart }

func (sigintAxis) Name() string { return "sigint" }

// Draws: its draws, at their places in the draw order (DrawAt).
func (a sigintAxis) Draws() []DrawAt { return []DrawAt{{8, a.drawIgnored}, {10, a.draw}} }

func (sigintAxis) Parts(k *Sink) []any { return []any{&k.Interrupts} }

func (sigintAxis) Words(s Schedule) []string {
	k := s.Sink
	var w []string
	if k.SigintIgnored {
		w = append(w, "SIGINT ignored from the start")
	}
	switch k.Sigint {
	case SigintLine:
		w = append(w, fmt.Sprintf("a SIGINT after main's line %d", k.SigintAt))
	case SigintBlocked:
		w = append(w, "a SIGINT once main blocks on fd 2")
	}
	return w
}

func (sigintAxis) Validate(k *Sink) error {
	switch {
	case k.Sigint != "" && k.Sigint != SigintLine && k.Sigint != SigintBlocked:
		return fmt.Errorf("sigint %q (accepted: line, blocked-write)", k.Sigint)
	case k.Sigint == SigintLine && (k.SigintAt < 0 || k.SigintAt > k.Threads[0].Calls[0].Lines):
		return fmt.Errorf("sigint_at %d (accepted: 0 to the lines of the main thread's first call)", k.SigintAt)
	case k.Sigint == SigintBlocked && (k.FD2.Kind != FD2Pipe || k.FD2.StallMs == 0):
		return fmt.Errorf("sigint blocked-write needs fd2 a stalled pipe (stall_ms > 0)")
	}
	return nil
}

// InContract: one Ctrl-C source at a time (the parent's SIGINT, a stall's,
// a stream that raises KeyboardInterrupt or waits for one).
func (sigintAxis) InContract(s Schedule) error {
	k := s.Sink
	sources := b2i(k.Stderr.Kind == StderrInterrupt || k.Stderr.Kind == StderrSignalWait) + b2i(k.Sigint != "") + b2i(k.stallSigint())
	if sources > 1 {
		return outside("two Ctrl-C sources")
	}
	return nil
}

func (sigintAxis) Arrange(k *Sink, c *scenario.Contract) {
	c.SigintIgnored = k.SigintIgnored
	if k.Sigint != "" && k.hasCaller() {
		c.Interrupts = 1
	}
}

func (sigintAxis) Faults(k *Sink) int { return b2i(k.SigintIgnored) + b2i(k.Sigint != "") }

func (sigintAxis) capLines(k *Sink, m int) { k.SigintAt = min(k.SigintAt, m) }
func (sigintAxis) mostLines(*Sink) int     { return 0 }

func (sigintAxis) Steps(Schedule) []Step {
	return []Step{
		change(PhaseCoarse, "no signals", func(c *Schedule) { c.Sink.Sigint, c.Sink.SigintAt, c.Sink.SigintIgnored = "", 0, false }),
		change(PhasePart, "no SIGINT", func(c *Schedule) { c.Sink.Sigint, c.Sink.SigintAt = "", 0 }),
		change(PhasePart, "SIGINT not ignored", func(c *Schedule) { c.Sink.SigintIgnored = false }),
	}
}

// drawIgnored: SIGINT ignored, when the swarm has Ctrl-C, one time in
// five.
func (sigintAxis) drawIgnored(d Drawer, s *Schedule, st *drawState) {
	s.Sink.SigintIgnored = st.sw.sigint && d.IntRange(0, 4, "sigint ignored?") == 0
}

// draw: one Ctrl-C source at most, once sys.stderr and the calls are
// drawn: the stream's own interrupt or a real SIGINT (the abort stall's,
// if it has one, else at a line of the main thread's first call, or while
// it is blocked on a timed stall).
func (sigintAxis) draw(d Drawer, s *Schedule, st *drawState) {
	k := s.Sink
	streamOwn := k.Stderr.Kind == StderrInterrupt || k.Stderr.Kind == StderrSignalWait
	st.abortSigint = st.sw.sigint && st.abortStall && !streamOwn && d.IntRange(0, 2, "abort stall sigint?") > 0
	if !st.sw.sigint || streamOwn || st.abortSigint {
		return
	}
	moments := []string{"", SigintLine}
	if k.FD2.Kind == FD2Pipe && k.FD2.StallMs > 0 {
		moments = append(moments, SigintBlocked)
	}
	k.Sigint = pick(d, moments, "sigint")
	if k.Sigint == SigintLine {
		k.SigintAt = d.IntRange(0, k.Threads[0].Calls[0].Lines, "sigint_at")
	}
}
