package programs

import (
	"logjam/failpoints"
	"logjam/sim"
)

// The fd-2 errors family (docs/SCENARIOS.md, rows E1-E4): the kernel
// refuses write(2) calls on fd 2 (the fd2-write-errno failpoint, counted
// over the run's write calls on fd 2). fd 2 itself is the contract's.
func init() {
	play(&Program{ID: "E1", Run: refusedWrites(`2*off->return("EPIPE")`)})
	play(&Program{ID: "E2", Run: refusedWrites(`2*off->return("ENOSPC")`)})
	play(&Program{ID: "E3", Run: refusedWrites(`2*off->1*return("EIO")`)})
	play(&Program{ID: "E4", Run: refusedWrites(`2*off->3*return("EAGAIN")`)})
}

// The lines of an fd-2 errors row: a call's, then a destructor's outside
// any call.
const (
	refusedCallLines    = 6
	refusedOutsideLines = 4
	refusedLineMsg      = 80
)

// refusedWrites (E1-E4), with fd 2's write calls refused as terms say:
//
//	module.execute()   # the delegate logs 6 lines
//	del obj            # a destructor logs 4 lines outside any call, GIL held
//	print("done")
func refusedWrites(terms string) func(e *Env) *sim.PyErr {
	return func(e *Env) *sim.PyErr {
		must(e.FP.Enable(failpoints.FD2WriteErrno, terms))
		be := e.RT.NewBackend("xnnpack")
		e.call(e.Main, "execute", func() *sim.NativeError {
			return be.ExecuteLogging(e.Main, sim.Info, refusedCallLines, refusedLineMsg)
		})
		for i := 0; i < refusedOutsideLines; i++ {
			e.RT.Log(e.Main, sim.Info, "module.cpp", 58, "%s", sim.Filler(100+i, refusedLineMsg))
		}
		return nil
	}
}
