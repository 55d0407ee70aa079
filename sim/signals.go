package sim

import (
	"os/signal"
	"sync"
	"syscall"

	"logjam/signals"
	"logjam/telemetry"
)

// HandlerKind is what Python's SIGINT handler is.
type HandlerKind string

// The SIGINT handler kinds.
const (
	// HandlerDefault is signal.default_int_handler: raises KeyboardInterrupt.
	HandlerDefault HandlerKind = "default_int_handler"
	// HandlerNone: SIGINT was ignored when the process started, so Python
	// installed no handler (SIG_IGN); PyErr_SetInterrupt does nothing.
	HandlerNone HandlerKind = "SIG_IGN"
	// HandlerCounting is a custom handler that counts its runs and raises
	// KeyboardInterrupt.
	HandlerCounting HandlerKind = "counting"
	// HandlerLogging is a handler that logs a line to sys.stderr and
	// returns (a graceful-shutdown flag): run inside sys.stderr's own write
	// (the EINTR path of a buffered stream), its write finds the
	// BufferedWriter's lock held by its own thread and raises RuntimeError
	// ("reentrant call inside <_io.BufferedWriter name='<stderr>'>"),
	// which ends the interrupted write; unbuffered (python -u) it writes
	// (docs/FACTS.md; row I8).
	HandlerLogging HandlerKind = "logging"
)

// HandlerLine is what HandlerLogging writes.
const HandlerLine = "SIGINT received: shutting down\n"

// Signals is the interpreter's pending-signal model: a real SIGINT (or
// PyErr_SetInterrupt) trips a flag; the handler runs at the next
// PyErr_CheckSignals on the main thread.
type Signals struct {
	in *Interp

	mu        sync.Mutex
	kind      HandlerKind
	tripped   bool
	runs      int
	onTrip    func()
	onArrival func() // a real SIGINT reached the bridge (the console's hint)
	// wake interrupts a blocked write(2): only a real signal does, never
	// PyErr_SetInterrupt.
	wake func()
}

func newSignals(in *Interp, wake func()) *Signals {
	s := &Signals{in: in, kind: HandlerDefault, wake: wake}
	// Python installs its SIGINT handler only when SIGINT was not ignored at
	// start (cmd & in a non-interactive shell starts it ignored).
	if signal.Ignored(syscall.SIGINT) {
		s.kind = HandlerNone
		return s
	}
	s.listen()
	return s
}

// listen bridges real SIGINTs into the model (arrive).
func (s *Signals) listen() {
	signals.Bridge(syscall.SIGINT, s.arrive)
}

// arrive is a real SIGINT reaching the model: the pending flag and the
// wake-up of a blocked write(2) are one step (a check of the flag waits for
// it, s.mu), and only then do the threads waiting for a SIGINT wake
// (onTrip). Were they woken by the flag first, the main thread could take
// the KeyboardInterrupt and begin a blocking write whose call the late
// wake-up then ended (EINTR), or not, as the scheduler ran this goroutine
// (DOUBLEINT or LOST; docs/TRUST.md, "A signal's two halves"; pinned by
// TestAWriteBegunAfterASIGINTIsNotEndedByIt).
func (s *Signals) arrive() {
	s.in.Tel.Emit(telemetry.Signal{Signal: "SIGINT"})
	s.mu.Lock()
	s.tripped = true
	if s.wake != nil {
		s.wake()
	}
	onTrip, arrived := s.onTrip, s.onArrival
	s.mu.Unlock()
	if onTrip != nil {
		onTrip()
	}
	if arrived != nil {
		arrived()
	}
}

// Kind is the installed handler.
func (s *Signals) Kind() HandlerKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kind
}

// Install sets Python's SIGINT handler (signal.signal). Installing one
// where SIGINT started ignored also makes the real signal deliverable.
func (s *Signals) Install(kind HandlerKind) {
	s.mu.Lock()
	was := s.kind
	s.kind = kind
	s.mu.Unlock()
	if was == HandlerNone && kind != HandlerNone {
		s.listen()
	}
}

func (s *Signals) trip() {
	s.mu.Lock()
	s.tripped = true
	s.mu.Unlock()
	if s.onTrip != nil {
		s.onTrip()
	}
}

// SetInterrupt is PyErr_SetInterrupt: it simulates a SIGINT arrival, and
// does nothing when the handler is SIG_IGN or SIG_DFL.
func (s *Signals) SetInterrupt() {
	if s.Kind() == HandlerNone {
		s.in.Tel.Emit(telemetry.SetInterrupt{Effect: "none: SIGINT is ignored"})
		return
	}
	s.in.Tel.Emit(telemetry.SetInterrupt{Effect: "tripped"})
	s.trip()
}

// Check is PyErr_CheckSignals: on the main thread, run the handler of a
// tripped SIGINT; elsewhere do nothing. The caller holds the GIL.
func (s *Signals) Check(t *Thread) *PyErr {
	if !t.Main {
		return nil
	}
	s.mu.Lock()
	if !s.tripped {
		s.mu.Unlock()
		return nil
	}
	s.tripped = false
	kind := s.kind
	s.runs++
	runs := s.runs
	s.mu.Unlock()
	if kind == HandlerNone {
		return nil
	}
	s.in.Tel.Emit(telemetry.Handler{Signal: "SIGINT", Handler: string(kind), Run: runs})
	if kind == HandlerLogging {
		return s.in.Stderr().Write(t, HandlerLine) // what the handler's print raises, it raises
	}
	return &PyErr{Type: "KeyboardInterrupt", Msg: ""}
}

// Runs is how many times a handler ran.
func (s *Signals) Runs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}
