package sim

import "logjam/telemetry"

// SignalWaitStream is an in-memory sys.stderr whose write, until a SIGINT
// arrives, waits for one the way a Python-level wait does (a write method
// that waits on a lock or an event): the GIL is released while it waits;
// when the signal trips, the thread retakes the GIL and runs
// PyErr_CheckSignals, and an exception the handler raises ends the write
// before it writes anything. After that first signal, writes go through
// as the MemStream's.
//
// Only the main thread's wait ends with the handler (CPython runs handlers
// only there); on another thread the check does nothing and the text is
// written once the signal has tripped.
//
// The threads one signal wakes take the GIL back in the order the threads
// were made (the main thread, whose wait the signal interrupts, first),
// and until each is queued for it, no other thread's switch or release
// passes it by. Reaching the GIL's queue as their goroutines ran, T1 could
// log its call's lines and switch between two calls before the main thread
// was queued, keep the GIL and wait for the main thread's backend lock
// (CRASH or HANG; docs/TRUST.md, "The threads a signal wakes"; pinned by
// TestTheThreadsASignalWakesTakeTheGILInTheOrderMade and suites/random's
// entry "seed 41646: pystderr CRASH (the threads a SIGINT wakes take the
// GIL in the order made)").
type SignalWaitStream struct {
	*MemStream
	in    *Interp
	until int // the trip count that ends the wait
}

// NewSignalWaitStream returns such a stream, waiting for the next SIGINT
// after now. It is dumped to telemetry at exit like any MemStream.
func (in *Interp) NewSignalWaitStream(name string) *SignalWaitStream {
	s := &SignalWaitStream{MemStream: NewMemStream(name), in: in, until: in.Signals.Trips() + 1}
	in.RegisterMemStream(s.MemStream)
	return s
}

// Write implements Stream.
func (s *SignalWaitStream) Write(t *Thread, text string) *PyErr {
	sig := s.in.Signals
	if sig.Trips() < s.until {
		s.in.Tel.Emit(telemetry.StreamWait{Thread: t.Name, Stream: s.Name(), For: "SIGINT"})
		held := t.HoldsGIL()
		if held {
			// Marked as dropping the GIL for work that ends by itself: once
			// the signal has ended the wait, the thread is in flight until
			// it is queued for the GIL again, and another thread's switch
			// or release waits for it.
			t.ReleaseGILNative()
		}
		sig.WaitTrips(t, s.until)
		if held {
			s.in.G.ParkUntil(t, func() bool { return !s.in.G.wokenBeforeLocked(t) })
			t.AcquireGIL()
		}
		if err := sig.Check(t); err != nil {
			s.record(text, 0, err.Type)
			return err
		}
	}
	return s.MemStream.Write(t, text)
}
