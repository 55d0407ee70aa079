package scenario

import (
	"logjam/failpoints"
	"logjam/ledger"
	"logjam/sim"
)

func init() {
	register(&Program{ID: "C1", Slug: "captured-in-memory", Family: "capture",
		Summary:  "sys.stderr captured in memory (capsys, redirect_stderr); one call logs 5 lines",
		Contract: Contract{Contract: ledger.Contract{Replaced: true}},
		Run:      func(e *Env) *sim.PyErr { return capturedCall(e, 5, 120, "") }})
	register(&Program{ID: "C2", Slug: "captured-write-raises-oserror", Family: "capture",
		Summary:  "sys.stderr.write raises OSError; one call logs 5 lines",
		Contract: Contract{Contract: ledger.Contract{Replaced: true}},
		Run:      func(e *Env) *sim.PyErr { return capturedCall(e, 5, 120, failpoints.StreamWriteOSError) }})
	register(&Program{ID: "C3", Slug: "captured-call-logs-200KiB", Family: "capture",
		Summary:  "captured; one call logs 200 KiB (cap, note, newest line kept)",
		Contract: Contract{Contract: ledger.Contract{Replaced: true}},
		Run:      func(e *Env) *sim.PyErr { return capturedCall(e, 1600, 128, "") }})
}

// capturedCall replaces sys.stderr with a StringIO, makes one call that logs
// n lines of about size bytes, and restores nothing (the capture is read at exit).
func capturedCall(e *Env, n, size int, fault string) *sim.PyErr {
	rt, in := e.RT, e.RT.In
	in.SetStderr(sim.NewMemStream("StringIO"))
	if fault != "" {
		must(e.FP.Enable(fault, "return(true)"))
	}
	be := rt.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError { return be.ExecuteLogging(e.Main, sim.Info, n, size) })
	return nil
}
