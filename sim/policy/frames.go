package policy

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
	// No Python write anywhere (fd2): only the scope's own exit.
	scopeExitOnly = []daemon.Frame{scopeExitFrame}
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

// UnwindFrames: the original writes through pythonbuf in the log callback.
func (p *pyStderr) UnwindFrames() (emit, emitNoGIL, exit []daemon.Frame) {
	return pythonbufFrames, pythonbufNoGILFrames, scopeExitOnly
}

// UnwindFrames: fd2 never releases the GIL in its log path.
func (p *fd2Direct) UnwindFrames() (emit, emitNoGIL, exit []daemon.Frame) {
	return nil, nil, scopeExitOnly
}

// UnwindFrames: the second round flushes inside a catch (...).
func (p *bufferedSink) UnwindFrames() (emit, emitNoGIL, exit []daemon.Frame) {
	return nil, nil, catchAllFlushFrames
}

// UnwindFrames: the third round and the merged fix flush inside a catch (...).
func (p *adaptiveSink) UnwindFrames() (emit, emitNoGIL, exit []daemon.Frame) {
	return nil, nil, catchAllFlushFrames
}

// UnwindFrames: ours catches py::error_already_set only.
func (p *logjamSink) UnwindFrames() (emit, emitNoGIL, exit []daemon.Frame) {
	return nil, nil, rethrowingFlushFrames
}
