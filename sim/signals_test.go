package sim

import "testing"

// The pending-signal model (docs/FACTS.md, CPython): a SIGINT trips a flag; the
// handler runs at the next PyErr_CheckSignals on the main thread only, once
// per trip; PyErr_SetInterrupt does nothing when SIGINT is SIG_IGN.
func TestSignalModel(t *testing.T) {
	in := newInterp(nil, Linux, Version{3, 12, 0})
	main, worker := in.newThread("MainThread", false, true), in.newThread("worker", false, false)
	s := &Signals{in: in, kind: HandlerDefault}

	if err := s.Check(main); err != nil {
		t.Fatalf("nothing pending, the handler ran: %v", err)
	}
	s.SetInterrupt()
	if err := s.Check(worker); err != nil || s.Runs() != 0 {
		t.Fatalf("PyErr_CheckSignals off the main thread ran the handler (%v, %d runs)", err, s.Runs())
	}
	if err := s.Check(main); err == nil || !err.IsKeyboardInterrupt() || s.Runs() != 1 {
		t.Fatalf("the main thread's check after a trip: %v, %d runs; want KeyboardInterrupt, 1 run", err, s.Runs())
	}
	if err := s.Check(main); err != nil || s.Runs() != 1 {
		t.Fatalf("one trip ran the handler twice (%v, %d runs)", err, s.Runs())
	}

	// signal.signal(SIGINT, SIG_IGN) with a Ctrl-C pending: nothing runs.
	s.SetInterrupt()
	s.Install(HandlerNone)
	if err := s.Check(main); err != nil {
		t.Fatalf("a pending SIGINT ran under SIG_IGN: %v", err)
	}

	ignored := &Signals{in: in, kind: HandlerNone}
	ignored.SetInterrupt()
	if err := ignored.Check(main); err != nil || ignored.Runs() != 0 {
		t.Fatalf("PyErr_SetInterrupt with SIGINT ignored raised %v (%d runs); want nothing", err, ignored.Runs())
	}
}
