package programs

import (
	"logjam/scenario/schedule"
	"logjam/sim"
)

func init() {
	playAxis("handler", func(k *schedule.Sink) axisPlay {
		if k.Handler != schedule.HandlerLogging {
			return nil
		}
		return handlerPlay{}
	})
}

// handlerPlay installs the schedule's SIGINT handler
// (schedule.PythonHandler) before the script's first call.
type handlerPlay struct{ noPlay }

func (handlerPlay) beforeThreads(p *sinkPlayer) { p.e.RT.In.Signals.Install(sim.HandlerLogging) }
