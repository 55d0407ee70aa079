package programs

import (
	"logjam/failpoints"
	"logjam/sim"
)

func init() {
	play(&Program{ID: "C1", Run: func(e *Env) *sim.PyErr { return capturedCall(e, 5, 120, "", "") }})
	play(&Program{ID: "C2", Run: func(e *Env) *sim.PyErr { return capturedCall(e, 5, 120, failpoints.StreamWriteOSError, "return(true)") }})
	play(&Program{ID: "C3", Run: func(e *Env) *sim.PyErr { return capturedCall(e, 1600, 128, "", "") }})
	play(&Program{ID: "C4", Run: func(e *Env) *sim.PyErr {
		return capturedCall(e, 5, 120, failpoints.StreamWriteOSError, "1*return(true)")
	}})
}

// capturedCall replaces sys.stderr with a StringIO, makes one call that logs
// n lines of about size bytes, and restores nothing (the capture is read at
// exit). fault, when set, is enabled with terms.
func capturedCall(e *Env, n, size int, fault, terms string) *sim.PyErr {
	rt, in := e.RT, e.RT.In
	in.SetStderr(sim.NewMemStream("StringIO"))
	if fault != "" {
		must(e.FP.Enable(fault, terms))
	}
	be := rt.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError { return be.ExecuteLogging(e.Main, sim.Info, n, size) })
	return nil
}
