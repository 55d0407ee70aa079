package schedule

import (
	"fmt"
	"logjam/verdict"

	"logjam/scenario"
)

// Abort ends the main thread's last call: when fd 2 is a stalled pipe or
// pty, the stall ends there and the delegate works on until fd 2 is
// drained; then it logs After lines, then a Fatal line (the runtime
// aborts) or, without Fatal, calls abort() itself.
type Abort struct {
	Fatal bool `json:"fatal,omitempty"`
	After int  `json:"after"`
}

// abortAxis is Sink.Abort: how the run may die inside a call.
type abortAxis struct{ noAxisPart }

func (abortAxis) Name() string { return "abort" }

// Draws: its draws, at their places in the draw order (DrawAt).
func (a abortAxis) Draws() []DrawAt { return []DrawAt{{3, a.drawEnding}, {11, a.draw}} }

func (abortAxis) Parts(k *Sink) []any { return []any{&k.Abort} }

// Words: the lines after the abort and how it comes.
func (abortAxis) Words(s Schedule) []string {
	a := s.Sink.Abort
	if a == nil {
		return nil
	}
	end := "abort()"
	if a.Fatal {
		end = "a Fatal line (abort)"
	}
	return []string{fmt.Sprintf("main's last call logs %d more, then %s", a.After, end)}
}

// FailureWords: a lost line at an abort says how it came (a stall
// before it), and any failure with other threads at the abort says so.
func (abortAxis) FailureWords(s Schedule, v verdict.Verdict) []string {
	k := s.Sink
	if k.Abort == nil || v == verdict.OK {
		return nil
	}
	var w []string
	if v == verdict.Lost {
		a := "abort"
		if k.Abort.Fatal {
			a = "fatal"
		}
		if k.FD2.StallMs > 0 {
			a = "stall+" + a
		}
		w = append(w, a)
	}
	if len(k.Threads) > 1 {
		w = append(w, "threads at the abort")
	}
	return w
}

func (abortAxis) Validate(k *Sink) error {
	if k.Abort != nil && (k.Abort.After < 0 || k.Abort.After > 64) {
		return fmt.Errorf("abort after %d (accepted: 0 to 64)", k.Abort.After)
	}
	return nil
}

// InContract: what an abort may meet and still lose nothing a correct
// sink could save (docs/CONTRACT.md, "Fatal and abort with several
// threads" and "Stalls").
func (abortAxis) InContract(s Schedule) error {
	k := s.Sink
	if k.Abort == nil {
		return nil
	}
	switch {
	case len(k.Threads) > 1 && k.Stderr.Kind != StderrOriginal && (!k.Abort.Fatal || k.otherCalls() > 0):
		return outside("an abort with sys.stderr replaced and other threads' calls (what they flushed to it dies with it)")
	case len(k.Threads) > 1 && !k.Abort.Fatal && k.outsideLines() > 0:
		return outside("a foreign abort with lines outside a call (kept process-wide, they die with it: no fatal path)")
	case k.StallAt(StallAtAbort) && k.outsideLines() > 0:
		return outside("a stall at the abort with lines outside a call (kept process-wide, they meet the full pipe in the fatal path)")
	case k.FD2.Kind != FD2File && k.FD2.Kind != FD2Pipe && k.FD2.Kind != FD2PTY && !k.FD2.forwarded():
		return outside("an abort with fd 2 %s (a chunk the forwarder read of earlier lines waits for the GIL in its hands and dies)", k.FD2.Kind)
	case !k.Abort.Fatal && k.Stderr.Kind != StderrOriginal:
		return outside("a foreign abort with sys.stderr replaced (what it holds dies)")
	case k.Stderr.Kind != StderrOriginal && len(k.Threads[0].Calls) != 1:
		return outside("an abort with sys.stderr replaced after earlier calls (their lines die with it)")
	case k.Sigint == SigintBlocked || k.stallSigint() && !k.StallAt(StallAtAbort):
		return outside("an abort with a blocked-write SIGINT before the abort")
	case k.StallAt(StallAtAbort) && (!k.Abort.Fatal || k.FD2.Capacity != 4096 || k.FD2.StallMs > 0 || len(k.FD2.Stalls) > 1 || k.Stderr.Kind != StderrOriginal):
		return outside("a stall at the abort, other than alone, on a one-page pipe, with sys.stderr the original, before a Fatal line (what the fatal path finds kept, or cannot fit, dies)")
	case k.StallAt(StallAtExit):
		return outside("an abort with a stall at exit (the run never reaches it)")
	case !k.Abort.Fatal && (k.FD2.StallMs > 0 || len(k.FD2.Stalls) > 0) && k.Abort.After < 1:
		return outside("a foreign abort after a stall with no line once fd 2 has room")
	case k.Outside > 0 || k.Threads[0].Outside > 0 || k.Daemons > 0:
		return outside("an abort with the main thread's lines outside a call or daemons (the run never reaches them)")
	}
	return nil
}

// Arrange: the run dies in the call, so no caller is left for a Ctrl-C
// (the SIGINT axes count interrupts only while k.hasCaller()).
func (abortAxis) Arrange(k *Sink, c *scenario.Contract) {
	if k.Abort != nil {
		c.Ends = scenario.EndsAbort
	}
}

func (abortAxis) Faults(k *Sink) int { return b2i(k.Abort != nil) }

func (abortAxis) Steps(s Schedule) []Step {
	if s.Sink.Abort == nil {
		return []Step{change(PhasePart, "no abort", func(c *Schedule) { c.Sink.Abort = nil })}
	}
	return []Step{
		change(PhasePart, "no abort", func(c *Schedule) { c.Sink.Abort = nil }),
		count(PhaseLast, "after", s.Sink.Abort.After, func(c *Schedule, n int) { c.Sink.Abort.After = n }),
	}
}

// hasCaller: the run returns from its calls (no abort ends it in one), so
// a Ctrl-C has a caller to reach.
func (k *Sink) hasCaller() bool { return k.Abort == nil }

// b2i counts a fault that is there.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// drawEnding draws how the run ends, first, so that the axes an abort
// constrains are drawn to fit it (an abort is as frequent as any other
// fault): one thread, fd 2 drained by no GIL waiter (a thread that dies
// holding the GIL leaves a forwarder's pipe as full as it is), and for a
// foreign abort (no Fatal line) sys.stderr the original.
func (abortAxis) drawEnding(d Drawer, _ *Schedule, st *drawState) {
	st.ending = pick(d, []string{"done", "done", "fatal", "abort"}, "ending")
}

// draw: the abort, once the calls and the SIGINT are drawn. Without a
// Fatal line, the contract covers only lines that had a way out before
// the abort: after a stall, at least one line once fd 2 has room again.
func (abortAxis) draw(d Drawer, s *Schedule, st *drawState) {
	k := s.Sink
	if st.ending == "done" {
		return
	}
	a := &Abort{Fatal: st.ending == "fatal"}
	if k.Stderr.Kind != StderrOriginal {
		// An in-memory sys.stderr dies with the process: lines of
		// earlier calls are gone whatever the sink does.
		k.Threads[0].Calls = k.Threads[0].Calls[:1]
		if k.Sigint == SigintLine {
			k.SigintAt = min(k.SigintAt, k.Threads[0].Calls[0].Lines)
		}
	}
	if k.Sigint == SigintBlocked {
		k.Sigint = ""
	}
	least := 0
	if !a.Fatal && k.FD2.StallMs > 0 {
		least = 1
	}
	a.After = d.IntRange(least, 20, "abort after")
	k.Abort = a
}
