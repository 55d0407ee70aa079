package programs

import (
	"logjam/scenario/schedule"
	"logjam/sim"
)

func init() {
	playAxis("fork", func(k *schedule.Sink) axisPlay {
		if k.Fork == nil {
			return nil
		}
		return forkPlay{}
	})
}

// forkPlay plays the schedule's Fork (schedule.Fork, row D5's shape) on the
// main thread, every other thread joined and its own lines outside any
// call logged: a native thread holds the sink's own locks until the fork
// has begun, if Held; the child's call logs Lines lines; the parent waits
// for it.
type forkPlay struct{ noPlay }

func (forkPlay) scriptEnds(p *sinkPlayer) *sim.PyErr {
	f := p.s.Fork
	var holder *sim.Thread
	if f.Held {
		holder = holdTheSinksLocks(p.e, "H1")
	}
	err := forkAndWait(p.e, f.Lines)
	if holder != nil {
		p.e.Main.Join(holder)
	}
	return err
}
