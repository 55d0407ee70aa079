package programs

import "logjam/sim"

// fork plays the schedule's Fork (schedule.Fork, row D5's shape) on the
// main thread, every other thread joined and its own lines outside any
// call logged: a native thread holds the sink's own locks until the fork
// has begun, if Held; the child's call logs Lines lines; the parent waits
// for it.
func (p *sinkPlayer) fork() *sim.PyErr {
	f := p.s.Fork
	if f == nil {
		return nil
	}
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
