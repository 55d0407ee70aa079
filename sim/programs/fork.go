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
func forkWhileTheSinksLockIsHeld(e *Env) *sim.PyErr {
	rt := e.RT
	e.call(e.Main, "execute", func() *sim.NativeError {
		for i := range 2 {
			rt.Log(e.Main, sim.Info, "module.cpp", 58, "%s: step %d of %d", e.Main.Name, i+1, 2)
		}
		return nil
	})
	t1 := holdTheSinksLocks(e, "T1")
	err := forkAndWait(e, 1)
	e.Main.Join(t1)
	return err
}

// holdTheSinksLocks starts a native thread of the runtime that holds the
// sink's own locks (as while it keeps a line outside any call) and returns
// once it holds them. It lets go once the main thread waits for one of
// them (a prepare handler taking it) or the process has forked: a barrier
// on the model's state. A sink that owns no lock gives it nothing to hold.
func holdTheSinksLocks(e *Env, name string) *sim.Thread {
	rt, in := e.RT, e.RT.In
	locks := rt.OwnLocks()
	holding := in.NewEvent(name + " holds the sink's own locks")
	t := in.StartNative(name, false, func(t *sim.Thread) {
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
	return t
}

// forkAndWait is os.fork() on the main thread, the child making one call
// that logs n lines and ending with os._exit(0), then os.waitpid(): a
// child that did not end with 0 raises ChildProcessError in the parent.
func forkAndWait(e *Env, n int) *sim.PyErr {
	rt := e.RT
	status := rt.Fork(e.Main, func(c *sim.Thread) int {
		err := e.call(c, "execute", func() *sim.NativeError {
			for i := range n {
				rt.Log(c, sim.Info, "module.cpp", 58, "%s: step %d of %d", c.Name, i+1, n)
			}
			return nil
		})
		if err != nil {
			return 1
		}
		return 0 // os._exit(0)
	})
	if status != 0 {
		return &sim.PyErr{Type: "ChildProcessError", Msg: fmt.Sprintf("the forked child exited %d", status)}
	}
	return nil
}
