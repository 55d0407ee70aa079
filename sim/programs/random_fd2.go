// fd 2 and sys.stderr of a random schedule (schedule's fd2 and stderr
// axes) as the child arranges them before the script runs.
package programs

import (
	"logjam/scenario/schedule"
	"logjam/sim"
	"logjam/telemetry"
)

// arrangeFD2 starts the in-process capture of fd 2 the schedule names
// (ipykernel's or wurlitzer's forwarder), or none.
func (p *sinkPlayer) arrangeFD2() *sim.FD2Capture {
	e, k := p.e, p.s
	var capture *sim.FD2Capture
	if k.FD2.Kind == schedule.FD2IPyKernel || k.FD2.Kind == schedule.FD2Wurlitzer {
		style := sim.IPyKernel
		if k.FD2.Kind == schedule.FD2Wurlitzer {
			style = sim.Wurlitzer
		}
		style.Chunk, style.Capacity = k.FD2.Chunk, k.FD2.Capacity
		capture = captureFD2(e, style)
	}
	return capture
}

// arrangeStderr makes sys.stderr what the schedule names: the original, a
// capture whose faults are the schedule's GO_FAILPOINTS, or a stream whose
// write waits for a SIGINT (and the SIGINT that ends the wait, asked once
// nothing else can move).
func (p *sinkPlayer) arrangeStderr() {
	e, k := p.e, p.s
	rt, in := e.RT, e.RT.In
	switch k.Stderr.Kind {
	case schedule.StderrOriginal:
	case schedule.StderrSignalWait:
		in.Signals.Install(sim.HandlerCounting)
		in.SetStderr(in.NewSignalWaitStream("StringIO"))
		go func() {
			// The SIGINT that ends the wait for all of them, asked once
			// nothing else can move (the first thread that waits in the
			// stream's write is named as the one that got it).
			t := rt.G.WaitUntilOnlyASignalMoves()
			rt.Tel.Emit(telemetry.Observed{Thread: t.Name, Waits: "a SIGINT", Then: "SIGINT"})
			askSIGINT(e)
		}()
	default: // the faults are the schedule's GO_FAILPOINTS
		in.SetStderr(sim.NewMemStream("StringIO"))
	}
}
