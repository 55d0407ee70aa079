package schedule

import (
	"fmt"
	"logjam/verdict"

	"logjam/scenario"
)

// Crash is a runtime's crash handler (row F10's shape: glog's or absl's
// failure signal handler, on a SIGTERM or a SIGSEGV) run on the main thread
// while the sink handles its At-th line outside any call (1: the first of
// Sink.Outside, logged once every other thread is joined): where the sink
// keeps the line, its own lock held, or once the sink is done with it. The
// handler logs a Fatal line through the sink and the runtime aborts.
type Crash struct {
	At int `json:"at"`
}

// CrashPart is a schedule's crash (embedded in Sink; nil: none).
type CrashPart struct {
	Crash *Crash `json:"crash,omitempty"`
}

// crashAxis is Sink.Crash.
type crashAxis struct{ noAxisPart }

func (crashAxis) Name() string { return "crash" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a crashAxis) Draws() []DrawAt { return []DrawAt{{23, a.draw}} }

func (crashAxis) Parts(k *Sink) []any { return []any{&k.CrashPart} }

func (crashAxis) Words(s Schedule) []string {
	if c := s.Sink.Crash; c != nil {
		return []string{fmt.Sprintf("a crash handler's Fatal line at outside line %d", c.At)}
	}
	return nil
}

func (crashAxis) FailureWords(s Schedule, v verdict.Verdict) []string {
	if s.Sink.Crash != nil && v != verdict.OK {
		return []string{"crash handler"}
	}
	return nil
}

// Validate: the crash interrupts one of the main thread's lines outside a
// call, and a run has one ending.
func (crashAxis) Validate(k *Sink) error {
	c := k.Crash
	switch {
	case c == nil:
	case c.At < 1 || c.At > k.Outside:
		return fmt.Errorf("crash at line %d outside a call (accepted: 1 to outside, %d)", c.At, k.Outside)
	case k.Abort != nil:
		return fmt.Errorf("crash with an abort (a run has one ending)")
	}
	return nil
}

// InContract: what a crash handler's Fatal line may meet and still lose
// nothing a correct sink could save (docs/CONTRACT.md, "A crash handler's
// Fatal line"): fd 2 not stalled and not a forwarder's pipe (what the
// fatal path finds kept, or what the forwarder holds, would meet a full
// pipe or die in it), no Ctrl-C on the way (one would end the script
// before its lines outside a call), nothing after the crash that the run
// would never reach (the daemons, the fork), and with sys.stderr replaced
// no call that logged before it and no thread's line outside a call that
// an outermost exit may follow (what an outermost exit flushed to the
// in-memory stream dies with the process, as at an abort).
func (crashAxis) InContract(s Schedule) error {
	k := s.Sink
	if k.Crash == nil {
		return nil
	}
	switch {
	case k.FD2.StallMs > 0 || len(k.FD2.Stalls) > 0:
		return outside("a crash with fd 2 stalled (what the fatal path finds kept meets the full pipe)")
	case k.FD2.forwarded():
		return outside("a crash with fd 2 %s (a chunk the forwarder read waits for the GIL in its hands and dies)", k.FD2.Kind)
	case k.Sigint != "" || k.stallSigint() || k.Stderr.Kind == StderrInterrupt || k.Stderr.Kind == StderrSignalWait:
		return outside("a crash with a Ctrl-C in the run (it may end the script before the lines the crash interrupts)")
	case k.Daemons > 0 || k.Fork != nil:
		return outside("a crash with daemons or a fork (the run never reaches them)")
	case k.Stderr.Kind != StderrOriginal && k.callsLogged():
		return outside("a crash with sys.stderr replaced after calls that logged (their lines, flushed to it, die with it)")
	case k.Stderr.Kind != StderrOriginal && k.outsideBeforeAnExit():
		return outside("a crash with sys.stderr replaced and a thread's lines outside a call before an outermost exit (it flushes them to it, and they die with it)")
	}
	return nil
}

// outsideBeforeAnExit: a thread logs its own lines outside a call while
// an outermost exit may still follow (kept for a replaced sys.stderr
// until then): any thread beside the main one (the main thread's calls
// run beside it), or the main thread while another thread makes calls.
func (k *Sink) outsideBeforeAnExit() bool {
	for i, t := range k.Threads {
		if t.Outside > 0 && (i > 0 || k.otherCalls() > 0) {
			return true
		}
	}
	return false
}

// callsLogged: some call, a nested one or a pool's workers logged a line.
func (k *Sink) callsLogged() bool {
	n := k.poolLines()
	threadsAxis{}.lineRuns(k, func(lines, _ int) { n += lines })
	return n > 0
}

// Arrange: the run dies in the handler.
func (crashAxis) Arrange(k *Sink, c *scenario.Contract) {
	if k.Crash != nil {
		c.Ends = scenario.EndsAbort
	}
}

func (crashAxis) Faults(k *Sink) int { return b2i(k.Crash != nil) }

func (crashAxis) Steps(s Schedule) []Step {
	c := s.Sink.Crash
	if c == nil {
		return nil
	}
	return []Step{
		change(PhasePart, "no crash", func(c *Schedule) { c.Sink.Crash = nil }),
		count(PhaseDetail, "crash at", c.At, func(c *Schedule, n int) { c.Sink.Crash.At = max(1, n) }),
	}
}

// draw: a run with no abort crashes one time in three at one of its lines
// outside a call at its end (given 8 of them if it had none); the
// daemons and the fork it would never reach are dropped with it. The
// crash that meets the keep's lock held needs sys.stderr replaced (logjam
// keeps a line outside a call then) and so, inside the contract, calls
// that log nothing (and no thread's own line outside a call, which an
// outermost exit would flush to the in-memory stream): with sys.stderr
// replaced the draw silences them (else the crash would lie outside the
// contract and be dropped).
// TestCrashDrawMeetsTheKeepLock pins how often a crash meets that lock.
func (crashAxis) draw(d Drawer, s *Schedule, _ *drawState) {
	if s.Sink.Abort != nil || d.IntRange(0, 2, "crash?") > 0 {
		return
	}
	c, err := Decode(string(s.JSON()))
	if err != nil {
		return
	}
	k := c.Sink
	if k.Outside == 0 {
		k.Outside, k.OutsideText = 8, nil
	}
	k.Crash = &Crash{At: d.IntRange(1, k.Outside, "crash at")}
	k.Daemons, k.GILDroppedMs, k.Fork = 0, 0, nil
	if k.Stderr.Kind != StderrOriginal {
		k.silenceCalls()
	}
	if c.Validate() == nil && c.InContract() == nil {
		*s = c
	}
}

// silenceCalls makes every call, nested call and pool log no line, and
// every thread log none of its own outside a call (Sink.Outside, logged
// once the threads are joined, stays).
func (k *Sink) silenceCalls() {
	for i := range k.Threads {
		k.Threads[i].Outside, k.Threads[i].OutsideText = 0, nil
	}
	threadsAxis{}.capLines(k, 0)
	k.eachCall(func(_, _ int, c *Call) {
		c.Pool = nil
		if c.Nested != nil {
			c.Nested.Pool = nil
		}
	})
}
