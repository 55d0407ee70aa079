package sim

import "logjam/daemon"

// The C++ frames of each policy's log path that a forced unwind can meet:
// only where the policy releases the GIL (a Python write: FileIO.write drops
// it around write(2)) can a daemon thread be asked to exit. Direct writes
// never release the GIL, so no unwind starts inside them. Innermost first.
var (
	// ~RuntimeErrorScope is a destructor: noexcept.
	scopeExitFrame = daemon.NoexceptFrame("~RuntimeErrorScope (the outermost exit of a binding call; a destructor, noexcept)")
	// The original log callback: std::cerr -> pybind11 pythonbuf, which takes
	// the GIL itself (gil_scoped_acquire) and writes a py::str. The seed saw
	// main crash "with a segfault in its log function": unwinding out of
	// sys.stderr.write releases the line and the call's arguments, and
	// gil_scoped_acquire's destructor releases the thread state, all without
	// the GIL on a finalizing interpreter. That comes before any outer catch.
	pythonbufFrames = []daemon.Frame{
		daemon.ReleasesPyObjectsFrame("pybind11::pythonbuf::_sync (~str line, ~gil_scoped_acquire)"),
		daemon.CleanupFrame("std::ostream::flush (libstdc++ rethrows __forced_unwind)"),
		daemon.CatchAllFrame("the log callback's catch (...) around std::cerr"),
	}
	// The same path entered without the GIL: the unwind starts in
	// gil_scoped_acquire's constructor, before the line or the guard exist,
	// so nothing is released and the outer catch (...) is what it meets.
	pythonbufNoGILFrames = []daemon.Frame{
		daemon.CleanupFrame("pybind11::pythonbuf::_sync (gil_scoped_acquire not yet constructed)"),
		pythonbufFrames[1],
		pythonbufFrames[2],
	}
	// The flush in ~RuntimeErrorScope: sys.stderr.write inside try { }
	// catch (...) { direct-write the kept lines }, reached first (the
	// second review: "the catch (...) at 256 swallows that unwind, and glibc
	// then aborts").
	catchAllFlushFrames = []daemon.Frame{
		daemon.CatchAllFrame("~RuntimeErrorScope: try { sys.stderr.write(kept) } catch (...)"),
		scopeExitFrame,
	}
	// logjam's flush catches py::error_already_set only (re-raised after the
	// call), so the unwind goes on to the noexcept destructor.
	rethrowingFlushFrames = []daemon.Frame{
		daemon.CleanupFrame("~RuntimeErrorScope: try { sys.stderr.write(kept) } catch (py::error_already_set&)"),
		scopeExitFrame,
	}
)

// policyFrames returns the frames around a policy's Emit (the log callback,
// entered with and without the GIL) and Exit (the scope's outermost exit).
func policyFrames(name string) (emit, emitNoGIL, exit []daemon.Frame) {
	switch name {
	case "pystderr":
		return pythonbufFrames, pythonbufNoGILFrames, []daemon.Frame{scopeExitFrame}
	case "buffered", "adaptive", "merged":
		return nil, nil, catchAllFlushFrames
	case "logjam":
		return nil, nil, rethrowingFlushFrames
	}
	return nil, nil, []daemon.Frame{scopeExitFrame} // fd2: no Python write anywhere
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
	emit, emitNoGIL, exit := policyFrames(p.Name())
	return &framedPolicy{Policy: p, emit: emit, emitNoGIL: emitNoGIL, exit: exit}
}

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
