package programs

import "logjam/sim"

// armCrash arms the schedule's Crash (schedule.Crash, row F10's shape)
// before the main thread logs its lines outside any call: the crash
// handler interrupts the At-th of them and logs a Fatal line through the
// sink; the runtime aborts.
func (p *sinkPlayer) armCrash() {
	c := p.s.Crash
	if c == nil {
		return
	}
	rt := p.e.RT
	rt.ArmCrash(p.e.Main, c.At, func(t *sim.Thread) {
		rt.Log(t, sim.Fatal, "crash_handler.cpp", 77, "*** SIGTERM received: the crash handler's context ***")
	})
}
