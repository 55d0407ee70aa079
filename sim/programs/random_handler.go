package programs

import (
	"logjam/scenario/schedule"
	"logjam/sim"
)

// installHandler installs the schedule's SIGINT handler
// (schedule.PythonHandler) before the script's first call.
func (p *sinkPlayer) installHandler() {
	if p.s.Handler == schedule.HandlerLogging {
		p.e.RT.In.Signals.Install(sim.HandlerLogging)
	}
}
