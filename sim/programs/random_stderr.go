package programs

import (
	"logjam/scenario/schedule"
	"logjam/sim"
	"logjam/telemetry"
)

func init() {
	playAxis("stderr", func(k *schedule.Sink) axisPlay {
		if k.Stderr.Kind == schedule.StderrOriginal {
			return nil
		}
		return stderrPlay{}
	})
}

// stderrPlay makes sys.stderr what the schedule names before the threads
// start: a capture whose faults are the schedule's GO_FAILPOINTS, or a
// stream whose write waits for a SIGINT (and the SIGINT that ends the
// wait, asked once nothing else can move).
type stderrPlay struct{ noPlay }

func (stderrPlay) beforeThreads(p *sinkPlayer) {
	e, k := p.e, p.s
	rt, in := e.RT, e.RT.In
	switch k.Stderr.Kind {
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
