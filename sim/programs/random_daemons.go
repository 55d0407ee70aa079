package programs

import (
	"logjam/scenario/schedule"
	"logjam/sim"
)

func init() {
	playAxis("daemons", func(k *schedule.Sink) axisPlay {
		if k.Daemons == 0 {
			return nil
		}
		return daemonsPlay{}
	})
}

// daemonsPlay starts the schedule's daemon threads (schedule.DaemonThreads)
// as the interpreter exits: each logs through calls while finalization
// runs (daemonsLogAtExit, rows T1 and T2).
type daemonsPlay struct{ noPlay }

func (daemonsPlay) atExit(p *sinkPlayer) *sim.PyErr {
	return daemonsLogAtExit(p.e, p.s.Daemons, false, false)
}
