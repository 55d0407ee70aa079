package programs

import (
	"logjam/sim"
	"logjam/telemetry"
)

// The fatal family (docs/SCENARIOS.md, rows F1-F9): a call that crashes, hangs or
// logs a Fatal line. The seed's second review round: buffering loses the
// logs of a call that crashes or hangs; its third: a fatal line leaves its
// context behind.
func init() {
	play(&Program{ID: "F1", Run: errorsThenAbort})
	play(&Program{ID: "F2", Run: errorsThenBlock})
	play(&Program{ID: "F3", Run: capturedContextThenFatal})
	play(&Program{ID: "F4", Run: stallThenFatal})
	play(&Program{ID: "F5", Run: otherThreadKeptThenFatal})
	play(&Program{ID: "F6", Run: func(e *Env) *sim.PyErr { return forwardedContextThenFatal(e, sim.Wurlitzer) }})
	play(&Program{ID: "F7", Run: func(e *Env) *sim.PyErr { return forwardedContextThenFatal(e, sim.IPyKernel) }})
	play(&Program{ID: "F8", Run: func(e *Env) *sim.PyErr { return importedUnderCaptureThenFatal(e, sim.IPyKernel) }})
	play(&Program{ID: "F9", Run: func(e *Env) *sim.PyErr { return importedUnderCaptureThenFatal(e, sim.Wurlitzer) }})
	play(&Program{ID: "F10", Run: crashWhileKeepingALine})
}

// The context every F program logs before it crashes, hangs or dies.
const contextLines = 3

func logContext(e *Env, t *sim.Thread, be *sim.Backend, n int) {
	for i := 0; i < n; i++ {
		logContext1(e, t, be, i)
	}
}

func logContext1(e *Env, t *sim.Thread, be *sim.Backend, i int) {
	e.RT.Log(t, sim.Error, be.Name+"_backend.cpp", 311, "delegate error context %d: %s", i, sim.Filler(i, 60))
}

// errorsThenAbort (F1):
//
//	module.execute()   # the delegate logs 3 errors, then abort()s
func errorsThenAbort(e *Env) *sim.PyErr {
	be := e.RT.NewBackend("vendor")
	e.call(e.Main, "execute", func() *sim.NativeError {
		logContext(e, e.Main, be, contextLines)
		e.RT.Abort("the delegate called abort() (no fatal line)")
		return nil
	})
	return nil
}

// errorsThenBlock (F2): the call holds the GIL, as every binding call does,
// logs, then waits for the backend lock; the backend's device worker (a
// native thread, no GIL) holds that lock and waits for a fence nobody will
// ever signal. A real block with the GIL held and no cycle: the last wait
// of the chain is an event no thread holds, so nothing may call it a cycle.
func errorsThenBlock(e *Env) *sim.PyErr {
	in := e.RT.In
	be := e.RT.NewBackend("vendor")
	fence := in.NewEvent("the device fence (never signalled)")
	holds := in.NewEvent("the device worker holds the backend lock")
	in.StartNative("device worker", true, func(t *sim.Thread) {
		be.L.Acquire(t)
		holds.Set(in)
		fence.Wait(t)
		be.L.Release(t)
	})
	holds.Wait(e.Main)
	// Once both threads wait for good (the main thread for the backend
	// lock, the worker for the fence), nothing moves again: the parent is
	// told, so that it need not wait for the deadline to see it.
	go func() {
		in.G.WaitUntilAllBlocked()
		e.RT.Tel.Emit(telemetry.Mark{Name: telemetry.MarkBlocked})
	}()
	e.call(e.Main, "execute", func() *sim.NativeError {
		logContext(e, e.Main, be, contextLines)
		return be.Execute(e.Main) // blocks forever on the backend lock
	})
	return nil
}

// capturedContextThenFatal (F3):
//
//	with redirect_stderr(io.StringIO()):
//	    module.execute()   # 3 errors of context, then ET_LOG(Fatal) and abort()
func capturedContextThenFatal(e *Env) *sim.PyErr {
	e.RT.In.SetStderr(sim.NewMemStream("StringIO"))
	return contextThenFatal(e)
}

// stallThenFatal (F4): the parent's reader is stalled when the call
// starts; the delegate logs 3 lines of context and 20 more of about 230
// bytes with the GIL held (more than the one-page pipe holds), so a writer
// feels the stall inside the call; the parent reads again then, and the
// delegate's next line waits for room; then a Fatal line. Whatever the sink
// still keeps when the fatal line comes dies with the abort unless the fatal
// path writes it.
func stallThenFatal(e *Env) *sim.PyErr {
	rt := e.RT
	be := rt.NewBackend("vendor")
	stall := resumeOnceStallFelt(e, e.Main)
	e.call(e.Main, "execute", func() *sim.NativeError {
		for i := 0; i < contextLines; i++ {
			logContext1(e, e.Main, be, i)
			stall.afterLine()
		}
		for i := 0; i < 20; i++ {
			rt.Log(e.Main, sim.Error, be.Name+"_backend.cpp", 322, "%s", sim.Filler(contextLines+i, 175))
			stall.afterLine()
		}
		rt.Log(e.Main, sim.Fatal, be.Name+"_backend.cpp", 340, "delegate state corrupt after %d errors", contextLines+20)
		return nil // not reached: a fatal line aborts
	})
	return nil
}

// crashWhileKeepingALine (F10): a runtime's crash handler (glog's or
// absl's failure signal handler: a SIGTERM from a supervisor, a SIGSEGV)
// runs on the main thread while the sink handles a line logged outside
// any call, and logs its Fatal line through the sink from the signal
// handler:
//
//	sys.stderr = io.StringIO()
//	module.cleanup()   # a destructor: 2 lines outside any call, GIL held;
//	                   # the signal arrives while the sink handles the 2nd:
//	                   # where it keeps it, its own lock held, or once done
//	# the handler: ET_LOG(Fatal) through the sink, then abort()
func crashWhileKeepingALine(e *Env) *sim.PyErr {
	rt := e.RT
	rt.In.SetStderr(sim.NewMemStream("StringIO"))
	rt.ArmCrash(e.Main, 2, func(t *sim.Thread) {
		rt.Log(t, sim.Fatal, "crash_handler.cpp", 77, "*** SIGTERM received: the crash handler's context ***")
	})
	for i := 0; i < 2; i++ {
		rt.Log(e.Main, sim.Info, "module.cpp", 58, "%s", sim.Filler(i, lineMsg128))
	}
	return nil // not reached: the handler aborts
}

// otherThreadKeptThenFatal (F5): the fatal path meets lines another thread
// left with the sink (docs/CONTRACT.md, "Fatal and abort with several
// threads"):
//
//	sys.stderr = io.StringIO()
//	t = threading.Thread(target=module.cleanup)  # a destructor: 2 lines outside any call, GIL held
//	t.start(); t.join()
//	module.execute()   # 3 errors of context, then ET_LOG(Fatal) and abort()
func otherThreadKeptThenFatal(e *Env) *sim.PyErr {
	rt := e.RT
	rt.In.SetStderr(sim.NewMemStream("StringIO"))
	be := rt.NewBackend("vendor")
	t1 := rt.In.Start("T1", false, func(t *sim.Thread) *sim.PyErr {
		for i := 0; i < 2; i++ {
			rt.Log(t, sim.Info, "module.cpp", 58, "%s", sim.Filler(i, lineMsg128))
		}
		return nil
	})
	e.Main.Join(t1)
	e.call(e.Main, "execute", func() *sim.NativeError {
		logContext(e, e.Main, be, contextLines)
		rt.Log(e.Main, sim.Fatal, be.Name+"_backend.cpp", 340, "delegate state corrupt after %d errors", contextLines)
		return nil // not reached: a fatal line aborts
	})
	return nil
}

// forwardedContextThenFatal (F6, F7): fd 2 is captured in-process after the
// module was imported (the sink was installed with fd 2 the parent's), and
// the call's context and its Fatal line meet a pipe only a GIL waiter
// drains:
//
//	with capture():          # wurlitzer's, or ipykernel's (sys.stderr its OutStream)
//	    module.execute()     # 3 errors of context, then ET_LOG(Fatal) and abort()
func forwardedContextThenFatal(e *Env, style sim.ForwarderStyle) *sim.PyErr {
	captureFD2(e, style)
	return contextThenFatal(e)
}

// importedUnderCaptureThenFatal (F8, F9): F7 and F6 in a process whose fd
// 2 was captured before the module was imported (a notebook's kernel
// captures at start):
//
//	capture()                # ipykernel's (the kernel), or wurlitzer's
//	import module            # the sink is installed: fd 2 is the pipe already
//	module.execute()         # 3 errors of context, then ET_LOG(Fatal) and abort()
func importedUnderCaptureThenFatal(e *Env, style sim.ForwarderStyle) *sim.PyErr {
	captureFD2(e, style)
	e.RT.ImportModule(e.Main)
	return contextThenFatal(e)
}

// contextThenFatal is F3's and F6-F9's call: 3 errors of context, then
// ET_LOG(Fatal) and abort().
func contextThenFatal(e *Env) *sim.PyErr {
	be := e.RT.NewBackend("vendor")
	e.call(e.Main, "execute", func() *sim.NativeError {
		logContext(e, e.Main, be, contextLines)
		e.RT.Log(e.Main, sim.Fatal, be.Name+"_backend.cpp", 340, "delegate state corrupt after %d errors", contextLines)
		return nil // not reached: a fatal line aborts
	})
	return nil
}
