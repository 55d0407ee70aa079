package programs

import (
	"fmt"

	"logjam/scenario/schedule"
	"logjam/sim"
)

func init() { playAxis("pool", func(*schedule.Sink) axisPlay { return poolPlay{} }) }

// poolPlay plays a call's schedule.Pool (runPool) once the call logged its
// own lines: its workers log the call's text class while the caller waits
// for them holding the GIL.
type poolPlay struct{ noPlay }

func (poolPlay) afterLines(p *sinkPlayer, at callAt) {
	c, t := at.c, at.t
	if c.Pool == nil {
		return
	}
	lvl := sim.Level(c.Level[0])
	runPool(p.e, t, c.Pool.Workers, c.Pool.Lines, func(w int) string { return fmt.Sprintf("%s.W%d", t.Name, w) }, func(wt *sim.Thread, _, n int) {
		p.e.RT.LogBytes(wt, lvl, "threadpool.cpp", 88, message(c, n))
	})
}
