package programs

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"logjam/failpoints"
	"logjam/sim"
	"logjam/telemetry"
)

// The signals family (docs/SCENARIOS.md, rows I1-I6): a Ctrl-C during a call
// must reach the caller once, after the call's lines, whatever the write
// it lands in. A real SIGINT comes from the parent on a MarkSIGINT mark;
// the program marks at the moment the scenario names (inside the call, or
// once a write is seen blocked in the wait-for graph) and never guesses a
// delay for the signal itself.
func init() {
	play(&Program{ID: "I1", Run: sigintDuringCall})
	play(&Program{ID: "I2", Run: sigintOnBlockedWrite})
	play(&Program{ID: "I8", Run: func(e *Env) *sim.PyErr {
		e.RT.In.Signals.Install(sim.HandlerLogging)
		return sigintOnBlockedWrite(e)
	}})
	play(&Program{ID: "I3", Run: func(e *Env) *sim.PyErr { return interruptedCapture(e, "before") }})
	play(&Program{ID: "I4", Run: func(e *Env) *sim.PyErr { return interruptedCapture(e, "half") }})
	play(&Program{ID: "I5", Run: sigintIgnoredCapture})
	play(&Program{ID: "I6", Run: sigintWakesWaitingStream})
	play(&Program{ID: "I7", Run: secondSigintOnBlockedWrite})
}

// askSIGINT asks the parent for one real SIGINT. Run by hand with no
// telemetry reader, nobody would answer: the child signals itself.
func askSIGINT(e *Env) {
	e.RT.Tel.Emit(telemetry.Mark{Name: telemetry.MarkSIGINT})
	if !e.RT.Tel.Enabled() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
	}
}

// sigintWhenWaiting starts an observer (a goroutine, not a Python thread:
// it stands where the parent would watch the child) that waits in the
// wait-for graph until t waits for r, then asks for one SIGINT and runs
// then (if any). It asks at most once; if t never waits for r, it never
// asks.
func sigintWhenWaiting(e *Env, t *sim.Thread, r sim.Resource, then func()) {
	go func() {
		e.RT.G.WaitUntilWaiting(t, r)
		e.RT.Tel.Emit(telemetry.Observed{Thread: t.Name, Waits: r.ResourceName(), Then: "SIGINT"})
		askSIGINT(e)
		if then != nil {
			then()
		}
	}()
}

// sigintDuringCall (I1):
//
//	try:
//	    module.execute()   # logs 3 lines; Ctrl-C; logs 2 lines
//	except KeyboardInterrupt:
//	    print("caught")
func sigintDuringCall(e *Env) *sim.PyErr {
	rt, sig := e.RT, e.RT.In.Signals
	e.call(e.Main, "execute", func() *sim.NativeError {
		for i := 0; i < 3; i++ {
			rt.Log(e.Main, sim.Info, "xnnpack_backend.cpp", 211, "%s", sim.Filler(i, 100))
		}
		seen := sig.Trips()
		askSIGINT(e)
		// The delegate works on (holding the GIL, as the bindings do) until the
		// bridge has seen the signal: a condition, not a guessed delay.
		sig.WaitTrips(e.Main, seen+1)
		for i := 3; i < 5; i++ {
			rt.Log(e.Main, sim.Info, "xnnpack_backend.cpp", 211, "%s", sim.Filler(i, 100))
		}
		return nil
	})
	return nil
}

// sigintOnBlockedWrite (I2): the parent's reader of fd 2 starts stalled
// (Contract.FD2Stalled, so no byte slips through); the call logs
// 48 lines of 128 bytes (6 KiB, half again the one-page pipe); an observer
// asks for the SIGINT as soon as the main thread is blocked on room on fd 2
// (whichever write that is: a Python write in the call, a direct write, or
// the flush at the outermost exit), and asks the parent to read again once
// the SIGINT has done what it can: the bridge has seen it, and the main
// thread waits for room in a new wait (the interrupted write returned, its
// handler ran, and a later write blocked) or still in one a signal cannot
// end (a direct write). A main thread that never waits again needs no reader.
func sigintOnBlockedWrite(e *Env) *sim.PyErr {
	rt := e.RT
	room, sig := rt.FD2.Room(), rt.In.Signals
	go func() {
		var at sim.WaitState
		rt.G.WaitUntil(func() bool { at = e.Main.WaitStateLocked(); return at.For == sim.Resource(room) })
		rt.Tel.Emit(telemetry.Observed{Thread: e.Main.Name, Waits: room.ResourceName(), Then: "SIGINT"})
		seen := sig.Trips()
		askSIGINT(e)
		sig.AwaitTrips(seen + 1)
		rt.G.WaitUntil(func() bool { _, anew := waitsAnewLocked(e.Main, room, at); return anew })
		rt.Tel.Emit(telemetry.Observed{Thread: e.Main.Name, Waits: room.ResourceName() + " again, after the SIGINT", Then: "resume fd 2"})
		rt.Tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Resume})
	}()
	be := rt.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError {
		return be.ExecuteLogging(e.Main, sim.Info, 48, lineMsg128)
	})
	return nil
}

// waitsAnewLocked reports whether t waits for room on fd 2 in a wait begun
// after at, or in one a signal cannot end, and returns the wait it is in:
// the state after a SIGINT at which the parent may read again (I2, I7 and
// random schedules' stalls). A WaitUntil condition (graph mutex held).
func waitsAnewLocked(t *sim.Thread, room *sim.PipeRoom, at sim.WaitState) (sim.WaitState, bool) {
	now := t.WaitStateLocked()
	return now, now.For == sim.Resource(room) && (now.Seq > at.Seq || !now.Interruptible)
}

// interruptedCapture (I3, I4):
//
//	sys.stderr = S()          # write raises KeyboardInterrupt once
//	try:
//	    module.execute()      # logs 5 lines
//	except KeyboardInterrupt:
//	    print("caught")
//
// The fault fires once: the first write raises, later writes (a fallback,
// the script's own) succeed, as a stream that was interrupted once does.
func interruptedCapture(e *Env, how string) *sim.PyErr {
	e.RT.In.SetStderr(sim.NewMemStream("StringIO"))
	must(e.FP.Enable(failpoints.StreamWriteInterrupt, fmt.Sprintf("1*return(%q)", how)))
	be := e.RT.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError { return be.ExecuteLogging(e.Main, sim.Info, 5, 120) })
	return nil
}

// sigintIgnoredCapture (I5): I3 where SIGINT was ignored at start. A child
// whose SIGINT is not ignored would be I3 again: refuse it.
func sigintIgnoredCapture(e *Env) *sim.PyErr {
	if k := e.RT.In.Signals.Kind(); k != sim.HandlerNone {
		panic(fmt.Sprintf("I5 needs SIGINT ignored at start (simrt -sigint ignored), the handler is %s", k))
	}
	e.RT.In.Print("SIGINT handler: " + string(sim.HandlerNone))
	return interruptedCapture(e, "before")
}

// sigintWakesWaitingStream (I6):
//
//	signal.signal(SIGINT, counting_handler)   # counts its runs, raises KeyboardInterrupt
//	sys.stderr = S()                          # write waits for a signal
//	try:
//	    module.execute()                      # logs 5 lines
//	except KeyboardInterrupt:
//	    print("caught")
//
// The SIGINT is asked for once the main thread waits in the stream's write;
// a policy that never writes to the stream never gets one.
func sigintWakesWaitingStream(e *Env) *sim.PyErr {
	in := e.RT.In
	in.Signals.Install(sim.HandlerCounting)
	in.SetStderr(in.NewSignalWaitStream("StringIO"))
	sigintWhenWaiting(e, e.Main, sim.SignalArrival{}, nil)
	be := e.RT.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError { return be.ExecuteLogging(e.Main, sim.Info, 5, 120) })
	return nil
}

// secondSigintOnBlockedWrite (I7): I2 with a second Ctrl-C.
//
//	try:
//	    module.execute()   # 48 lines of 128 bytes into a stalled one-page pipe
//	except KeyboardInterrupt:
//	    print("caught")
//	try:
//	    pass               # the eval loop runs a handler still pending
//	except KeyboardInterrupt:
//	    print("caught")
//
// The first SIGINT comes when the main thread waits for room on fd 2; the
// second once that one reached the model and the main thread waits for room
// in a new wait (a fallback's write, or the rest of an interrupted one); the
// parent reads again once the main thread waits in a newer wait, or in one a
// signal cannot end, or once the call is over.
func secondSigintOnBlockedWrite(e *Env) *sim.PyErr {
	rt := e.RT
	room, sig := rt.FD2.Room(), rt.In.Signals
	var resumed sync.Once
	resume := func(why string) {
		resumed.Do(func() {
			rt.Tel.Emit(telemetry.Observed{Thread: e.Main.Name, Waits: why, Then: "resume fd 2"})
			rt.Tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Resume})
		})
	}
	// waitAgain waits until the main thread waits for room in a wait begun
	// after at (or in one a signal cannot end) and returns it.
	waitAgain := func(at sim.WaitState) (now sim.WaitState) {
		rt.G.WaitUntil(func() bool {
			var anew bool
			now, anew = waitsAnewLocked(e.Main, room, at)
			return anew
		})
		return now
	}
	go func() {
		at := waitAgain(sim.WaitState{Seq: -1})
		for i := 1; i <= 2; i++ {
			if !at.Interruptible {
				break // a signal cannot end this wait: only the reader can
			}
			rt.Tel.Emit(telemetry.Observed{Thread: e.Main.Name, Waits: room.ResourceName(), Then: fmt.Sprintf("SIGINT %d of 2", i)})
			seen := sig.Trips()
			askSIGINT(e)
			sig.AwaitTrips(seen + 1)
			at = waitAgain(at)
		}
		resume(room.ResourceName() + " again, after the SIGINTs")
	}()
	be := rt.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError {
		return be.ExecuteLogging(e.Main, sim.Info, 48, lineMsg128)
	})
	resume("nothing: the call is over")
	if exc := sig.Check(e.Main); exc != nil {
		rt.Tel.Emit(telemetry.Exception{Thread: e.Main.Name, Call: "<eval loop>", Type: exc.Type, Text: exc.Msg})
		rt.In.Print(e.Main.Name + ": caught " + exc.Type + " (a handler still pending)")
	}
	return nil
}
