package programs

import (
	"fmt"
	"time"

	"logjam/sim"
	"logjam/telemetry"
)

// The pipes-and-terminals family (docs/SCENARIOS.md, rows P1-P6). The in-child
// arrangements (a capture pipe with a forwarder) are made by the program
// itself, so `simrt -scenario P1 -policy fd2` reproduces the cell by hand;
// the parent-side ones (a pipe or a pty the parent reads, and its pauses)
// are the contract's FD2 and the MarkFD2Pause marks.
func init() {
	play(&Program{ID: "P1", Run: func(e *Env) *sim.PyErr { return capturedFD2Call(e, sim.IPyKernel) }})
	play(&Program{ID: "P2", Run: func(e *Env) *sim.PyErr { return capturedFD2Call(e, sim.Wurlitzer) }})
	play(&Program{ID: "P3", Run: busyTerminal})
	play(&Program{ID: "P4", Run: func(e *Env) *sim.PyErr { return capturedFD2Call(e, sim.Wurlitzer) }})
	play(&Program{ID: "P5", Run: stallThenAbort})
	play(&Program{ID: "P6", Run: destructorLogs})
}

// 128 lines of 128 bytes: 16 KiB, four times the capture pipe.
const (
	sixteenKiBLines = 128
	lineMsg128      = 73 // message bytes of a 128-byte line
)

// captureFD2 sets up the in-process capture of style: for ipykernel,
// sys.stderr becomes the OutStream and the forwarder writes to it; for
// wurlitzer, sys.stderr is left alone and the forwarder writes to a sink.
func captureFD2(e *Env, style sim.ForwarderStyle) *sim.FD2Capture {
	in := e.RT.In
	var sink *sim.MemStream
	if style.Name == sim.IPyKernel.Name {
		sink = sim.NewMemStream("OutStream")
		in.SetStderr(sink)
	} else {
		sink = sim.NewPlainMemStream("wurlitzer sink")
		in.RegisterMemStream(sink)
	}
	c, err := e.RT.CaptureFD2(style, sink)
	must(err)
	return c
}

// capturedFD2Call (P1, P2, P4):
//
//	with capture():               # ipykernel's or wurlitzer's
//	    module.execute()          # the delegate logs 16 KiB
//	print("done")
func capturedFD2Call(e *Env, style sim.ForwarderStyle) *sim.PyErr {
	c := captureFD2(e, style)
	be := e.RT.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError {
		return be.ExecuteLogging(e.Main, sim.Info, sixteenKiBLines, lineMsg128)
	})
	must(c.Close(e.Main))
	return nil
}

// destructorLogs (P6): a destructor runs outside any binding call, holding
// the GIL, and logs 16 KiB.
func destructorLogs(e *Env) *sim.PyErr {
	c := captureFD2(e, sim.IPyKernel)
	for i := 0; i < sixteenKiBLines; i++ {
		e.RT.Log(e.Main, sim.Info, "module.cpp", 58, "%s", sim.Filler(i, lineMsg128))
	}
	must(c.Close(e.Main))
	return nil
}

// pauseFD2 asks the parent to stop reading fd 2 for d (a no-op when the
// child runs by hand).
func pauseFD2(e *Env, d time.Duration) {
	e.RT.Tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Pause, Ms: d.Milliseconds()})
}

// busyTerminal (P3): 240 lines of 200 bytes (48 KiB: more than the pty
// holds, less than the keep cap), logged while the terminal pauses.
func busyTerminal(e *Env) *sim.PyErr {
	be := e.RT.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError {
		pauseFD2(e, 300*time.Millisecond)
		return be.ExecuteLogging(e.Main, sim.Info, 240, 145)
	})
	return nil
}

// stallThenAbort (P5): 20 lines of 230 bytes (more than the one-page pipe
// holds) with the GIL held, then the delegate aborts with no fatal line:
// whatever the sink still keeps is gone. The parent's reader is stalled until
// a write felt it; after that the delegate's next line waits for room, so a
// sink that writes its kept lines once there is room again has the room.
func stallThenAbort(e *Env) *sim.PyErr {
	rt := e.RT
	stall := resumeOnceStallFelt(e, e.Main)
	e.call(e.Main, "execute", func() *sim.NativeError {
		for i := 0; i < 20; i++ {
			rt.Log(e.Main, sim.Info, "xnnpack_backend.cpp", 211, "%s", sim.Filler(i, 175))
			stall.afterLine()
		}
		rt.Abort(fmt.Sprintf("delegate aborted after %d lines", 20))
		return nil
	})
	return nil
}
