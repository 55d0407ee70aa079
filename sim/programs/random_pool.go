package programs

import (
	"fmt"

	"logjam/scenario/schedule"
	"logjam/sim"
)

// pool plays a call's schedule.Pool (runPool): its workers log the
// call's text class while t waits for them holding the GIL.
func (p *sinkPlayer) pool(t *sim.Thread, c schedule.Call) {
	lvl := sim.Level(c.Level[0])
	runPool(p.e, t, c.Pool.Workers, c.Pool.Lines, func(w int) string { return fmt.Sprintf("%s.W%d", t.Name, w) }, func(wt *sim.Thread, _, n int) {
		p.e.RT.LogBytes(wt, lvl, "threadpool.cpp", 88, message(c, n))
	})
}
