package programs

import (
	"fmt"
	"slices"

	"logjam/sim"
)

// fork() with a log-path lock held (docs/SCENARIOS.md, row D5).
func init() {
	play(&Program{ID: "D5", Run: forkWhileTheSinksLockIsHeld})
}

// forkWhileTheSinksLockIsHeld (D5):
//
//	module.execute()            # logs 2 lines
//	# T1, a native thread of the runtime, holds the sink's own locks
//	# (as while it keeps a line outside any call) until the fork has begun
//	pid = os.fork()
//	if pid == 0:
//	    module.execute()        # logs 1 line
//	    os._exit(0)
//	os.waitpid(pid, 0)          # the child's status must be 0
//	print("done")
//
// T1 lets go once the forking thread waits for one of its locks (a
// prepare handler taking it) or the process has forked: a barrier on the
// model's state. A sink that owns no lock gives T1 nothing to hold.
func forkWhileTheSinksLockIsHeld(e *Env) *sim.PyErr {
	rt, in := e.RT, e.RT.In
	logs := func(t *sim.Thread, n int) func() *sim.NativeError {
		return func() *sim.NativeError {
			for i := range n {
				rt.Log(t, sim.Info, "module.cpp", 58, "%s: step %d of %d", t.Name, i+1, n)
			}
			return nil
		}
	}
	e.call(e.Main, "execute", logs(e.Main, 2))
	locks := rt.OwnLocks()
	holding := in.NewEvent("T1 holds the sink's own locks")
	t1 := in.StartNative("T1", false, func(t *sim.Thread) {
		for _, l := range locks {
			l.Acquire(t)
		}
		holding.Set(in)
		in.G.WaitUntil(func() bool {
			return in.G.ForkedLocked() || slices.ContainsFunc(locks, func(l *sim.Lock) bool {
				return slices.Contains(l.WaitersLocked(), e.Main)
			})
		})
		for _, l := range slices.Backward(locks) {
			l.Release(t)
		}
	})
	in.G.WaitUntil(holding.IsSetLocked)
	status := rt.Fork(e.Main, func(c *sim.Thread) int {
		if err := e.call(c, "execute", logs(c, 1)); err != nil {
			return 1
		}
		return 0 // os._exit(0)
	})
	e.Main.Join(t1)
	if status != 0 {
		return &sim.PyErr{Type: "ChildProcessError", Msg: fmt.Sprintf("the forked child exited %d", status)}
	}
	return nil
}
