package programs

import (
	"sync"
	"sync/atomic"

	"logjam/sim"
	"logjam/telemetry"
)

// stallResumer ends a stall of fd 2 (a parent's reader that starts stalled)
// once a writer has felt it, and no earlier: a room check found no room, or
// a write blocks on it. Then it asks the parent to read again
// (MarkFD2Resume), and the delegate's next line waits until fd 2 has room.
// Whatever the machine's load, the stall lasts exactly until it was felt and
// ends before the next line: no verdict depends on a delay.
type stallResumer struct {
	e        *Env
	t        *sim.Thread
	once     sync.Once
	asked    atomic.Bool
	roomSeen bool // owned by t's goroutine
}

// resumeOnceStallFelt watches t's writes to fd 2. A write that blocks is
// seen by an observer (a goroutine standing where the parent watches);
// call afterLine after each of t's lines for the rest.
func resumeOnceStallFelt(e *Env, t *sim.Thread) *stallResumer {
	r := &stallResumer{e: e, t: t}
	go func() {
		room := e.RT.FD2.Room()
		e.RT.G.WaitUntil(func() bool { return t.WaitStateLocked().For == sim.Resource(room) })
		r.resume("a write blocked on " + room.ResourceName())
	}()
	return r
}

func (r *stallResumer) resume(felt string) {
	r.once.Do(func() {
		r.asked.Store(true)
		r.e.RT.Tel.Emit(telemetry.Observed{Thread: r.t.Name, Waits: "the stall felt: " + felt, Then: "resume fd 2"})
		r.e.RT.Tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Resume})
	})
}

// afterLine is the delegate's work between two lines: once the stall was
// felt, it asks for the resume (if the observer has not) and, once, waits
// until fd 2 has room again before the next line.
func (r *stallResumer) afterLine() {
	if !r.asked.Load() {
		if !r.e.RT.FD2.StallFelt(r.t) {
			return
		}
		r.resume("a room check found no room on fd 2")
	}
	if !r.roomSeen {
		r.roomSeen = true
		r.e.RT.FD2.WaitRoom(r.t)
	}
}
