package programs

import (
	"fmt"
	"slices"

	"logjam/sim"
)

// The daemon-thread teardown family (docs/SCENARIOS.md, rows T1-T6): daemon
// threads log through binding calls while the interpreter exits. The
// platform and the Python version come from the flags (-platform,
// -python); the fate of a daemon thread that retakes the GIL after
// finalization is the daemon package's rule for them.
func init() {
	play(&Program{ID: "T1", Run: func(e *Env) *sim.PyErr { return daemonsLogAtExit(e, 2, false, false) }})
	play(&Program{ID: "T2", Run: func(e *Env) *sim.PyErr { return daemonsLogAtExit(e, 2, false, false) }})
	play(&Program{ID: "T3", Run: func(e *Env) *sim.PyErr { return daemonsLogAtExit(e, 2, true, false) }})
	play(&Program{ID: "T4", Run: func(e *Env) *sim.PyErr { return daemonsLogAtExit(e, 2, true, false) }})
	play(&Program{ID: "T5", Run: func(e *Env) *sim.PyErr { return daemonsLogAtExit(e, 1, false, true) }})
	play(&Program{ID: "T6", Run: func(e *Env) *sim.PyErr { return daemonsLogAtExit(e, 1, false, true) }})
}

// daemonsLogAtExit plays:
//
//	sys.stderr = io.StringIO()            # captured only
//	def worker(module):
//	    while True:
//	        module.execute()              # logs 3 lines under its backend lock
//	for i in range(n):
//	    threading.Thread(target=worker, args=(modules[i],), daemon=True).start()
//	print("done")                         # and exit: finalization
//
// Each thread has its own module (backend and lock), so the daemons never
// wait for each other's lock. With teardown, finalization destroys each
// backend, and the destructor takes the backend lock.
//
// The interleaving is fixed by the GIL's FIFO handoff and barriers on the
// graph, never by time: main lets each daemon run only once it has itself
// asked for the GIL back, so each daemon runs up to the first point where it
// releases the GIL, and main gets the GIL there. That point is the policy's:
// inside the log write (pystderr: sys.stderr.write drops the GIL around
// write(2)), inside the flush at the call's outermost exit (buffered; merged
// and logjam once the daemon rule is off), or between two calls (direct
// writes, a captured stream). When finalization starts, every daemon is
// queued for the GIL at that point: a barrier waits for it, and the
// promise makes finalization refuse to start (a scenario error) if it did
// not hold.
func daemonsLogAtExit(e *Env, n int, captured, teardown bool) *sim.PyErr {
	rt, in, main := e.RT, e.RT.In, e.Main
	rt.Policy = sim.WithUnwindFrames(rt.Policy)
	if captured {
		in.SetStderr(sim.NewMemStream("StringIO"))
	}
	var daemons []*sim.Thread
	for i := 1; i <= n; i++ {
		be := rt.NewBackend(fmt.Sprintf("xnnpack%d", i))
		if teardown {
			in.AtTeardown(be.Destroy)
		}
		daemons = append(daemons, in.Start(fmt.Sprintf("daemon-%d", i), true, func(t *sim.Thread) *sim.PyErr {
			// Barrier: run only once main has asked for the GIL back.
			in.G.WaitUntil(func() bool { return slices.Contains(in.GIL.WaitersLocked(), main) })
			for {
				e.call(t, "execute", func() *sim.NativeError { return be.ExecuteLogging(t, sim.Info, 3, 80) })
				t.SwitchGIL() // the eval loop's switch between two calls
			}
		}))
	}
	// A daemon whose write through the original sys.stderr found its
	// BufferedWriter's lock held by another (queued for the GIL inside its
	// own write) waits for that lock instead: it never asks for the GIL
	// again, as finalization leaves the holder no way to let it go.
	stderrLock := in.StderrLock()
	allQueued := func() bool {
		for _, d := range daemons {
			if !slices.Contains(in.GIL.WaitersLocked(), d) &&
				(stderrLock == nil || !slices.Contains(stderrLock.WaitersLocked(), d)) {
				return false
			}
		}
		return true
	}
	// settled: each daemon is queued for the GIL, or waits for something
	// else only the process can end (then the promise below refuses to
	// finalize, rather than this barrier waiting forever), or has ended. A
	// daemon whose write waits for room the parent makes is not settled:
	// it writes on and queues for the GIL once the parent has read.
	settled := func() bool {
		for _, d := range daemons {
			if !d.SettledLocked() {
				return false
			}
		}
		return true
	}
	// Every daemon has started and waits for the GIL (in whatever order they
	// queued: each ends up at its own first release point all the same).
	in.G.ParkUntil(main, allQueued)
	// Hand the GIL to the first daemon and queue behind the others: main
	// gets it back when the last daemon first releases it. That daemon may
	// not have run its write(2) yet (sys.stderr.write drops the GIL before
	// it): wait until every daemon is queued for the GIL again, which each
	// does only after its write.
	main.SwitchGIL()
	in.G.ParkUntil(main, settled)
	in.PromiseAtFinalization("that every daemon thread is queued for the GIL (or for sys.stderr's BufferedWriter lock)", allQueued, daemons...)
	return nil
}
