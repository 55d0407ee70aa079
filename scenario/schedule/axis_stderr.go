package schedule

import (
	"fmt"
	"slices"
	"time"

	"logjam/failpoints"
	"logjam/scenario"
)

// The sys.stderr kinds.
const (
	StderrOriginal   = "original"
	StderrCaptured   = "captured"   // StringIO
	StderrSlow       = "slow"       // StringIO whose write sleeps DelayMs, GIL released
	StderrOSError    = "oserror"    // StringIO whose write raises OSError from its K-th call on
	StderrInterrupt  = "interrupt"  // StringIO whose K-th write raises KeyboardInterrupt (How: before, half)
	StderrSignalWait = "signalwait" // StringIO whose write waits for a SIGINT; a counting handler; the parent sends one
)

// Stderr is what sys.stderr is.
type Stderr struct {
	Kind    string `json:"kind"`
	K       int    `json:"k,omitempty"`
	How     string `json:"how,omitempty"`
	DelayMs int    `json:"delay_ms,omitempty"`
}

// Replaced reports whether sys.stderr is not sys.__stderr__.
func (k *Sink) Replaced() bool {
	return k.Stderr.Kind != StderrOriginal || k.FD2.Kind == FD2IPyKernel
}

// stderrAxis is Sink.Stderr.
type stderrAxis struct{ noAxisPart }

func (stderrAxis) Name() string { return "stderr" }

// Draws: its draws, at their places in the draw order (DrawAt).
func (a stderrAxis) Draws() []DrawAt {
	return []DrawAt{{7, a.draw}, {13, a.drawHalf}, {18, a.drawLateWrite}}
}

func (stderrAxis) Parts(k *Sink) []any { return []any{&k.Stderr} }

func (stderrAxis) Words(s Schedule) []string {
	x := s.Sink.Stderr
	switch x.Kind {
	case StderrOriginal:
		return nil
	case StderrCaptured:
		return []string{"sys.stderr a StringIO"}
	case StderrSlow:
		return []string{fmt.Sprintf("sys.stderr a StringIO taking %d ms a write", x.DelayMs)}
	case StderrOSError:
		return []string{fmt.Sprintf("sys.stderr raising OSError from its write %d on", x.K)}
	case StderrInterrupt:
		return []string{fmt.Sprintf("sys.stderr raising KeyboardInterrupt at its write %d (%s)", x.K, x.How)}
	case StderrSignalWait:
		return []string{"sys.stderr waiting for a SIGINT in its write"}
	}
	return []string{"sys.stderr " + x.Kind}
}

func (stderrAxis) Validate(k *Sink) error {
	e := k.Stderr
	switch {
	case !slices.Contains([]string{StderrOriginal, StderrCaptured, StderrSignalWait, StderrSlow, StderrOSError, StderrInterrupt}, e.Kind):
		return fmt.Errorf("stderr kind %q (accepted: original, captured, slow, oserror, interrupt, signalwait)", e.Kind)
	case e.Kind == StderrSlow && (e.DelayMs < 1 || e.DelayMs > 200):
		return fmt.Errorf("stderr delay_ms %d (accepted: 1 to 200)", e.DelayMs)
	case (e.Kind == StderrOSError || e.Kind == StderrInterrupt) && (e.K < 1 || e.K > 100):
		return fmt.Errorf("stderr k %d (accepted: 1 to 100)", e.K)
	case e.Kind == StderrInterrupt && e.How != "before" && e.How != "half":
		return fmt.Errorf("stderr how %q (accepted: before, half)", e.How)
	case e.Kind != StderrOriginal && k.FD2.Kind == FD2IPyKernel:
		return fmt.Errorf("with fd2 ipykernel, sys.stderr is the OutStream (stderr kind original)")
	}
	return nil
}

func (stderrAxis) InContract(s Schedule) error {
	k := s.Sink
	if k.Stderr.Kind == StderrInterrupt && k.Stderr.How == "half" {
		if len(k.Threads) != 1 || len(k.Threads[0].Calls) != 1 || k.outsideLines() > 0 || k.Daemons > 0 {
			return outside("a stream that raises after half its text, then more writes")
		}
	}
	return nil
}

func (stderrAxis) Arrange(k *Sink, c *scenario.Contract) {
	c.Replaced = k.Replaced()
	if (k.Stderr.Kind == StderrInterrupt || k.Stderr.Kind == StderrSignalWait) && k.hasCaller() {
		c.Interrupts = 1
	}
}

func (stderrAxis) Faults(k *Sink) int { return b2i(k.Stderr.Kind != StderrOriginal) }

func (stderrAxis) Failpoints(k *Sink) failpoints.Set {
	switch st := k.Stderr; st.Kind {
	case StderrSlow:
		return failpoints.Set{{Name: failpoints.StreamWriteDelay, Terms: fmt.Sprintf("return(%d)", st.DelayMs)}}
	case StderrOSError:
		return failpoints.Set{{Name: failpoints.StreamWriteOSError, Terms: nthThenOn(st.K, "return(true)")}}
	case StderrInterrupt:
		return failpoints.Set{{Name: failpoints.StreamWriteInterrupt, Terms: nthOnce(st.K, fmt.Sprintf("return(%q)", st.How))}}
	}
	return nil
}

// Slowness: a slow sys.stderr's delay for every line written one write
// each.
func (stderrAxis) Slowness(s Schedule) time.Duration {
	if s.Sink.Stderr.Kind != StderrSlow {
		return 0
	}
	return time.Duration(s.Lines()+16) * time.Duration(s.Sink.Stderr.DelayMs) * time.Millisecond
}

func (stderrAxis) Steps(Schedule) []Step {
	return []Step{change(PhasePart, "original sys.stderr", func(c *Schedule) { c.Sink.Stderr = Stderr{Kind: StderrOriginal} })}
}

// draw: sys.stderr, when the swarm replaces it, once fd 2 and the stalls'
// plan are drawn: none into a forwarder's OutStream, at a foreign abort
// (no Fatal line) or at a stall at the abort (lines kept for a replaced
// one meet the stalled pipe in the fatal path).
func (stderrAxis) draw(d Drawer, s *Schedule, st *drawState) {
	k := s.Sink
	if st.sw.stderr && k.FD2.Kind != FD2IPyKernel && st.ending != "abort" && !st.abortStall {
		k.Stderr.Kind = pick(d, []string{StderrOriginal, StderrCaptured, StderrSlow, StderrOSError, StderrInterrupt, StderrSignalWait}, "stderr")
	} else {
		k.Stderr.Kind = StderrOriginal
	}
	switch k.Stderr.Kind {
	case StderrSlow:
		k.Stderr.DelayMs = d.IntRange(1, 30, "delay_ms")
	case StderrOSError, StderrInterrupt:
		k.Stderr.K = d.IntRange(1, 6, "k")
		if k.Stderr.Kind == StderrInterrupt {
			k.Stderr.How = "before"
		}
	}
}

// drawHalf: a write that raises after writing half its text leaves half
// a line in the stream; whatever is written to it next continues that
// line. The contract covers it only as the stream's last write: one
// thread, one call, no line outside it, no daemon, so a half write ends
// the draw.
func (stderrAxis) drawHalf(d Drawer, s *Schedule, st *drawState) {
	k := s.Sink
	if k.Stderr.Kind == StderrInterrupt && len(k.Threads) == 1 && len(k.Threads[0].Calls) == 1 &&
		d.Bool("half?") {
		k.Stderr.How = "half"
		st.done = true
	}
}

// drawLateWrite moves the stream's raising write (Stderr.K), half the
// time, onto a daemon's flush: the daemons log once every thread's calls
// have flushed and every thread beside the main one has written its own
// write at its end (and before the process-wide lines' flush at exit), so
// with K drawn 1-6 alone a daemon's flush raised only when the run made
// fewer writes than K before it, and a bug on that path took a median of
// some 650 runs to show (docs/RANDOM.md, "A bug zoo"). The count is
// logjam's, found by playing seeds with every K (one flush per outermost
// call that logged, one per other thread); for another policy K is one
// more place in the run. Drawn after the daemons and the threads at an
// abort, so that a seed's schedule changed only in its K.
func (stderrAxis) drawLateWrite(d Drawer, s *Schedule, _ *drawState) {
	k := s.Sink
	if k.Stderr.Kind != StderrOSError && k.Stderr.Kind != StderrInterrupt {
		return
	}
	if k.Daemons == 0 || !d.Bool("k at a daemon's flush?") {
		return
	}
	before := len(k.Threads) - 1
	for _, th := range k.Threads {
		for _, c := range th.Calls {
			if c.Lines > 0 || c.Nested != nil && c.Nested.Lines > 0 {
				before++
			}
		}
	}
	k.Stderr.K = before + d.IntRange(1, k.Daemons, "k: which daemon's")
}
