package programs

import (
	"fmt"

	"logjam/scenario/schedule"
	"logjam/sim"
)

// pool plays a call's schedule.Pool: its workers, native threads, log
// their lines while t waits for them holding the GIL (Thread.JoinNative).
// Each is started only once the one before it has logged its first line,
// waits for something or has ended, so the order the workers begin in is
// the model's state, not the Go scheduler's (as D3's workers).
func (p *sinkPlayer) pool(t *sim.Thread, c schedule.Call) {
	rt, in := p.e.RT, p.e.RT.In
	lvl := sim.Level(c.Level[0])
	var workers []*sim.Thread
	for w := range c.Pool.Workers {
		first := in.NewEvent(fmt.Sprintf("%s's worker %d logged its first line", t.Name, w))
		wt := in.StartNative(fmt.Sprintf("%s.W%d", t.Name, w), false, func(wt *sim.Thread) {
			for n := range c.Pool.Lines {
				rt.LogBytes(wt, lvl, "threadpool.cpp", 88, message(c, n))
				if n == 0 {
					first.Set(in)
				}
			}
		})
		in.G.WaitUntil(func() bool { return first.IsSetLocked() || wt.SettledLocked() })
		workers = append(workers, wt)
	}
	for _, wt := range workers {
		t.JoinNative(wt)
	}
}
