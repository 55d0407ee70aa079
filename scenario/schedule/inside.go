package schedule

import "fmt"

// InContract reports why a valid schedule lies outside logjam's contract
// (docs/CONTRACT.md), or nil: the rules Gen draws by, as one predicate, so
// that a shrinker (or a hand-written row) cannot step outside it. Validate
// says whether a schedule can be played; InContract whether logjam must
// pass it.
func (s Schedule) InContract() error {
	if s.Sink == nil {
		return nil
	}
	k := s.Sink
	out := func(format string, args ...any) error {
		return fmt.Errorf("schedule outside the contract: "+format, args...)
	}
	if k.Abort != nil {
		switch {
		// Several threads: docs/CONTRACT.md, "Fatal and abort with
		// several threads".
		case len(k.Threads) > 1 && k.Stderr.Kind != StderrOriginal && (!k.Abort.Fatal || k.otherCalls() > 0):
			return out("an abort with sys.stderr replaced and other threads' calls (what they flushed to it dies with it)")
		case len(k.Threads) > 1 && !k.Abort.Fatal && k.outsideLines() > 0:
			return out("a foreign abort with lines outside a call (kept process-wide, they die with it: no fatal path)")
		case k.StallAt(StallAtAbort) && k.outsideLines() > 0:
			return out("a stall at the abort with lines outside a call (kept process-wide, they meet the full pipe in the fatal path)")
		case k.FD2.Kind != FD2File && k.FD2.Kind != FD2Pipe && k.FD2.Kind != FD2PTY:
			return out("an abort with fd 2 %s (a forwarder's pipe gets only what fits)", k.FD2.Kind)
		case !k.Abort.Fatal && k.Stderr.Kind != StderrOriginal:
			return out("a foreign abort with sys.stderr replaced (what it holds dies)")
		case k.Stderr.Kind != StderrOriginal && len(k.Threads[0].Calls) != 1:
			return out("an abort with sys.stderr replaced after earlier calls (their lines die with it)")
		case k.Sigint == SigintBlocked || k.stallSigint() && !k.StallAt(StallAtAbort):
			return out("an abort with a blocked-write SIGINT before the abort")
		case k.StallAt(StallAtAbort) && (!k.Abort.Fatal || k.FD2.Capacity != 4096 || k.FD2.StallMs > 0 || len(k.FD2.Stalls) > 1 || k.Stderr.Kind != StderrOriginal):
			return out("a stall at the abort, other than alone, on a one-page pipe, with sys.stderr the original, before a Fatal line (what the fatal path finds kept, or cannot fit, dies)")
		case k.StallAt(StallAtExit):
			return out("an abort with a stall at exit (the run never reaches it)")
		case !k.Abort.Fatal && (k.FD2.StallMs > 0 || len(k.FD2.Stalls) > 0) && k.Abort.After < 1:
			return out("a foreign abort after a stall with no line once fd 2 has room")
		case k.Outside > 0 || k.Threads[0].Outside > 0 || k.Daemons > 0:
			return out("an abort with the main thread's lines outside a call or daemons (the run never reaches them)")
		}
	}
	sources := 0
	for _, on := range []bool{k.Stderr.Kind == StderrInterrupt || k.Stderr.Kind == StderrSignalWait, k.Sigint != "", k.stallSigint()} {
		if on {
			sources++
		}
	}
	if sources > 1 {
		return out("two Ctrl-C sources")
	}
	for i, st := range k.FD2.Stalls {
		if st.Ms != 200 && st.Ms != 400 {
			return out("stall %d of %d ms (the contract's stalls last 200 or 400 ms once felt)", i, st.Ms)
		}
		if st.SigintThread > 0 && s.Platform != "macos" {
			return out("stall %d: a SIGINT on thread %d on linux (the kernel gives a process-directed SIGINT to the main thread)", i, st.SigintThread)
		}
	}
	if k.Stderr.Kind == StderrInterrupt && k.Stderr.How == "half" {
		if len(k.Threads) != 1 || len(k.Threads[0].Calls) != 1 || k.outsideLines() > 0 || k.Daemons > 0 {
			return out("a stream that raises after half its text, then more writes")
		}
	}
	if e := k.FD2.Errors; e != nil && e.Errno == ErrnoEAGAIN && k.Abort != nil && !k.Abort.Fatal {
		return out("a foreign abort with EAGAINs (a line kept for want of room dies with the process, as after a stall)")
	}
	if e := k.FD2.Errors; e != nil && e.Errno == ErrnoEAGAIN && k.StallAt(StallAtAbort) {
		return out("EAGAINs with a stall at the abort (a line kept for want of room meets a reader that reads again only once the Fatal line's write waits: it dies, as what cannot fit)")
	}
	if e := k.FD2.Errors; e != nil && e.Errno != ErrnoEAGAIN && k.FD2.Kind == FD2PTY {
		return out("%s on a terminal (one whose reader falls behind takes part of a line; the rest refused leaves half a line the next one continues)", e.Errno)
	}
	if e := k.FD2.Errors; e != nil && e.Errno == ErrnoEAGAIN && e.Times > 100 {
		return out("%d EAGAINs in a row (no room that lasts is a stall; the contract's EAGAINs are a bounded run)", e.Times)
	}
	if k.Daemons > 0 && (k.Stderr.Kind == StderrSlow || k.Stderr.Kind == StderrSignalWait) {
		return out("daemons frozen inside a stream's write that released the GIL")
	}
	if k.FD2.Kind == FD2PTY || k.FD2.Kind == FD2Pipe {
		if k.FD2.StallMs != 0 && k.FD2.StallMs != 200 && k.FD2.StallMs != 400 {
			return out("a stall of %d ms (the contract's stalls last 200 or 400 ms)", k.FD2.StallMs)
		}
	}
	for i, t := range k.Threads {
		for j, c := range t.Calls {
			if c.WaitFor == i+1 {
				return out("thread %d call %d waits for itself", i, j)
			}
		}
	}
	return nil
}

// outsideLines counts the lines logged outside any call, by every thread.
func (k *Sink) outsideLines() int {
	n := k.Outside
	for _, t := range k.Threads {
		n += t.Outside
	}
	return n
}

// otherCalls counts the calls of the threads other than the main one.
func (k *Sink) otherCalls() int {
	n := 0
	for _, t := range k.Threads[1:] {
		n += len(t.Calls)
	}
	return n
}

// stallSigint: a stall of the schedule sends a SIGINT.
func (k *Sink) stallSigint() bool {
	for _, st := range k.FD2.Stalls {
		if st.Sigint {
			return true
		}
	}
	return false
}

// StallAt reports whether a stall of the schedule starts at that mark.
func (k *Sink) StallAt(at string) bool {
	for _, st := range k.FD2.Stalls {
		if st.At == at {
			return true
		}
	}
	return false
}
