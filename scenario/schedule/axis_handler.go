package schedule

import (
	"fmt"

	"logjam/scenario"
)

// The Python SIGINT handlers a schedule may install.
const (
	HandlerDefault = ""        // default_int_handler: KeyboardInterrupt
	HandlerLogging = "logging" // prints a line to sys.stderr and returns (a graceful-shutdown flag)
)

// PythonHandler is the script's SIGINT handler: Handler, HandlerDefault or
// HandlerLogging. A logging handler runs inside the write a SIGINT
// interrupts (the EINTR path): inside sys.stderr's own buffered write, its
// print raises RuntimeError (reentrant call), which ends that write (row
// I8; docs/FACTS.md).
type PythonHandler struct {
	Handler string `json:"handler,omitempty"`
}

// handlerAxis is Sink.PythonHandler.
type handlerAxis struct{ noAxisPart }

func (handlerAxis) Name() string { return "handler" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a handlerAxis) Draws() []DrawAt { return []DrawAt{{20, a.draw}} }

func (handlerAxis) Parts(k *Sink) []any { return []any{&k.PythonHandler} }

func (handlerAxis) Words(s Schedule) []string {
	if s.Sink.Handler == HandlerLogging {
		return []string{"a SIGINT handler that logs"}
	}
	return nil
}

func (handlerAxis) Validate(k *Sink) error {
	switch {
	case k.Handler != HandlerDefault && k.Handler != HandlerLogging:
		return fmt.Errorf("handler %q (accepted: logging, or none for default_int_handler)", k.Handler)
	case k.Handler == HandlerLogging && k.Stderr.Kind == StderrSignalWait:
		return fmt.Errorf("handler logging with stderr signalwait (that stream installs its own counting handler)")
	case k.Handler == HandlerLogging && k.SigintIgnored:
		return fmt.Errorf("handler logging with sigint_ignored (the script installs no handler where SIGINT started ignored)")
	}
	return nil
}

// Arrange: a logging handler raises nothing, so a SIGINT delivers no
// KeyboardInterrupt to the caller (a stream's own KeyboardInterrupt is no
// signal, and comes alone: one Ctrl-C source a run).
func (handlerAxis) Arrange(k *Sink, c *scenario.Contract) {
	if k.Handler == HandlerLogging && (k.Sigint != "" || k.stallSigint()) {
		c.Interrupts = 0
	}
}

func (handlerAxis) Faults(k *Sink) int { return b2i(k.Handler == HandlerLogging) }

func (handlerAxis) Steps(s Schedule) []Step {
	if s.Sink.Handler == HandlerDefault {
		return nil
	}
	return []Step{change(PhasePart, "default SIGINT handler", func(c *Schedule) { c.Sink.Handler = HandlerDefault })}
}

// draw: where a SIGINT comes (the parent's, or a stall's), the handler
// logs and returns one time in three.
func (handlerAxis) draw(d Drawer, s *Schedule, _ *drawState) {
	k := s.Sink
	if k.Sigint == "" && !k.stallSigint() || k.SigintIgnored || k.Stderr.Kind == StderrSignalWait {
		return
	}
	if d.IntRange(0, 2, "handler logs?") == 0 {
		k.Handler = HandlerLogging
		if s.Validate() != nil || s.InContract() != nil {
			k.Handler = HandlerDefault
		}
	}
}
