package programs

import (
	"fmt"

	"logjam/scenario/schedule"
	"logjam/sim"
)

func init() {
	playAxis("worker-crash", func(k *schedule.Sink) axisPlay {
		if k.WorkerCrash == nil {
			return nil
		}
		return workerCrashPlay{}
	})
}

// workerCrashPlay arms the schedule's WorkerCrash once the main thread's
// call has logged its own lines, before its pool starts: the crash
// handler interrupts the At-th line of the worker poolPlay names
// "<caller>.W<worker>", waits until every other thread waits or has ended
// (the abort's barrier: a write another worker has under way has
// finished), logs a Fatal line through the sink, and the runtime aborts.
type workerCrashPlay struct{ noPlay }

func (workerCrashPlay) atLine(p *sinkPlayer, at callAt, n int) {
	w := p.s.WorkerCrash
	if at.Thread != 0 || at.Call != w.Call || n != at.c.Lines {
		return
	}
	rt := p.e.RT
	rt.ArmCrashOn(fmt.Sprintf("%s.W%d", at.t.Name, w.Worker), w.At, func(t *sim.Thread) {
		rt.G.WaitUntilOthersSettled(t, "every other thread waits or has ended before the crash handler's Fatal line")
		rt.Log(t, sim.Fatal, "crash_handler.cpp", 77, "*** SIGSEGV received in a worker: the crash handler's context ***")
	})
}
