package sim

import (
	"fmt"
	"logjam/internal/axes"
	"strings"
)

// Policy is the log sink: where a runtime log line goes. Each design of the
// log path in the seed's history is one Policy; docs/SCENARIOS.md words their rules.
type Policy interface {
	Name() string
	// Enter runs at the outermost entry of a binding call (GIL held).
	Enter(t *Thread)
	// Emit takes one log line from any thread, in or out of a call.
	Emit(t *Thread, l Line)
	// Exit runs at the outermost exit (GIL held, no backend lock held) and
	// returns an exception to raise after the call, if any.
	Exit(t *Thread) *PyErr
	// ExceptionText turns the 127-byte message and the call's Error lines
	// into the Python exception text, or the UnicodeDecodeError a strict
	// decode raises.
	ExceptionText(main, appended []byte) (string, *PyErr)
}

// Installer is a policy with state of its own to set when the module is
// imported (Runtime.ImportModule): what it records of the process then.
type Installer interface {
	Install(t *Thread)
}

// PolicyMaker builds a runtime's policy (see package logjam/sim/policy).
type PolicyMaker func(rt *Runtime) (Policy, error)

// UnknownPolicy is the error for a name no policy has.
func UnknownPolicy(name string) error {
	return fmt.Errorf("unknown policy %q (accepted: %s)", name, strings.Join(axes.Policies, ", "))
}
