package schedule

import (
	"time"

	"logjam/scenario"
)

// Contract is what the run of this schedule requires, as a matrix cell's
// contract: how it ends, how the parent arranges fd 2 and its signals, and
// what the ledger checks. It never holds a verdict.
func (s Schedule) Contract() scenario.Contract {
	c := scenario.Contract{Ends: scenario.EndsDone, FD2: scenario.FD2File}
	if s.Lazy != nil {
		c.Callbacks = s.Lazy.Callbacks()
		return c
	}
	k := s.Sink
	switch k.FD2.Kind {
	case FD2Pipe:
		c.FD2, c.PipeSize = scenario.FD2ParentPipe, k.FD2.Capacity
	case FD2PTY:
		c.FD2 = scenario.FD2PTY
	}
	c.FD2Stalled = k.FD2.StallMs > 0
	c.SigintIgnored = k.SigintIgnored
	c.Replaced = k.Replaced()
	if k.Sigint != "" || k.Stderr.Kind == StderrInterrupt || k.Stderr.Kind == StderrSignalWait {
		c.Interrupts = 1
	}
	for _, st := range k.FD2.Stalls {
		// A SIGINT of a stall at exit has no caller to reach: its lines
		// are judged, its Ctrl-C is not (docs/CONTRACT.md's edge).
		if st.Sigint && st.At == StallAtLine {
			c.Interrupts = 1
			if st.Twice {
				c.Interrupts = 2
			}
		}
	}
	if k.Abort != nil {
		// The run dies in the call: no caller is left for a Ctrl-C.
		c.Ends, c.Interrupts = scenario.EndsAbort, 0
	}
	return c
}

// Slowness is how long the schedule's own slowness may take at most: a
// slow sys.stderr's delay for every line written one write each, and a
// forwarder's reads of a few bytes each (forwarderReadMax a read). A
// deadline is a bound on failure detection: a run's must exceed this.
func (s Schedule) Slowness() time.Duration {
	if s.Sink == nil {
		return 0
	}
	var d time.Duration
	if s.Sink.Stderr.Kind == StderrSlow {
		d += time.Duration(s.Lines()+16) * time.Duration(s.Sink.Stderr.DelayMs) * time.Millisecond
	}
	if f := s.Sink.FD2; (f.Kind == FD2IPyKernel || f.Kind == FD2Wurlitzer) && f.Chunk > 0 {
		d += time.Duration(s.MessageBytes()/f.Chunk) * forwarderReadMax
	}
	return d
}

// forwarderReadMax bounds one forwarder read with its turn for the GIL:
// about 25 us measured on two loaded cores, four times that for a machine
// running four children at a time under load. Without it, a forwarder
// reading a byte at a time (seed 154 of -random 200 -seed 7: 227 KB) met
// the 10 s deadline before its cycle formed under load 37 at -j 4: HANG
// without a cycle instead of the cycle.
const forwarderReadMax = 100 * time.Microsecond

// Runtime is the policy, platform, Python and stderr profile (simrt
// -stderr) the child runs with (a lazy-init schedule's log path plays no
// part: logjam).
func (s Schedule) Runtime() (policy, platform, python, stderr string) {
	stderr = "buffered"
	if s.Buffering != "" {
		stderr = s.Buffering
	}
	if s.Lazy != nil {
		return "logjam", s.Platform, s.Python, stderr
	}
	return s.Policy, s.Platform, s.Python, stderr
}
