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
