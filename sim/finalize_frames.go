package sim

import "logjam/daemon"

// Framed is a policy that describes the C++ frames of its log path that a
// forced unwind can meet (innermost first): around its Emit, entered with and
// without the GIL, and around its Exit (the scope's outermost exit).
type Framed interface {
	UnwindFrames() (emit, emitNoGIL, exit []daemon.Frame)
}

// framedPolicy is a policy with its C++ frames described for the forced
// unwind; routing is the inner policy's, untouched.
type framedPolicy struct {
	Policy
	emit, emitNoGIL, exit []daemon.Frame
}

// WithUnwindFrames returns p with the C++ frames of its log path described,
// so that a forced unwind that starts inside its Emit or Exit (a daemon
// thread retaking the GIL after finalization) meets them. Idempotent.
func WithUnwindFrames(p Policy) Policy {
	if _, ok := p.(*framedPolicy); ok {
		return p
	}
	f := &framedPolicy{Policy: p}
	if fr, ok := p.(Framed); ok {
		f.emit, f.emitNoGIL, f.exit = fr.UnwindFrames()
	}
	return f
}

// Unwrap returns the policy itself.
func (f *framedPolicy) Unwrap() Policy { return f.Policy }

func (f *framedPolicy) Emit(t *Thread, l Line) {
	frames := f.emit
	if frames != nil && !t.HoldsGIL() {
		frames = f.emitNoGIL
	}
	defer unwindFrames(t, frames)
	f.Policy.Emit(t, l)
}

func (f *framedPolicy) Exit(t *Thread) *PyErr {
	defer unwindFrames(t, f.exit)
	return f.Policy.Exit(t)
}
