package programs

import (
	"logjam/scenario/schedule"
	"logjam/sim"
)

func init() {
	playAxis("crash", func(k *schedule.Sink) axisPlay {
		if k.Crash == nil {
			return nil
		}
		return crashPlay{}
	})
}

// crashPlay arms the schedule's Crash (schedule.Crash, row F10's shape)
// once every thread is joined, before the main thread logs its lines
// outside any call: the crash handler interrupts the At-th of them and
// logs a Fatal line through the sink; the runtime aborts.
type crashPlay struct{ noPlay }

func (crashPlay) joined(p *sinkPlayer) {
	rt := p.e.RT
	rt.ArmCrash(p.e.Main, p.s.Crash.At, func(t *sim.Thread) {
		rt.Log(t, sim.Fatal, "crash_handler.cpp", 77, "*** SIGTERM received: the crash handler's context ***")
	})
}
