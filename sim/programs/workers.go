package programs

import (
	"fmt"

	"logjam/sim"
)

// Native workers that log inside a call (docs/SCENARIOS.md, rows D3 and
// D4): the binding call, GIL held, runs the delegate's partitions on the
// runtime's own thread pool and waits for its threads (std::thread::join),
// which log while it waits.
func init() {
	play(&Program{ID: "D3", Run: func(e *Env) *sim.PyErr { return workersLogInCall(e, false, workerLines) }})
	play(&Program{ID: "D4", Run: func(e *Env) *sim.PyErr {
		return workersLogInCall(e, true, sixteenKiBLines/poolWorkers)
	}})
}

const (
	poolWorkers = 2 // the thread pool's threads
	workerLines = 8 // D3's lines per worker
)

// workersLogInCall (D3; D4 with wurlitzer's forwarder on fd 2):
//
//	with capture():                  # D4 only: wurlitzer's
//	    module.execute()             # its 2 pool threads log lines of 128 bytes; it joins them, GIL held
//	print("done")
//
// Each worker is started only once the one before it has logged its first
// line or waits for something, so who logs first is the model's state, not
// the Go scheduler's.
func workersLogInCall(e *Env, forwarded bool, lines int) *sim.PyErr {
	rt, in := e.RT, e.RT.In
	var capture *sim.FD2Capture
	if forwarded {
		capture = captureFD2(e, sim.Wurlitzer)
	}
	be := rt.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError {
		var pool []*sim.Thread
		for w := range poolWorkers {
			first := in.NewEvent(fmt.Sprintf("W%d logged its first line", w))
			t := in.StartNative(fmt.Sprintf("W%d", w), false, func(t *sim.Thread) {
				for n := range lines {
					rt.Log(t, sim.Info, be.Name+"_threadpool.cpp", 88, "partition %d step %d: %s", w, n, sim.Filler(n, lineMsg128-24))
					if n == 0 {
						first.Set(in)
					}
				}
			})
			in.G.WaitUntil(func() bool { return first.IsSetLocked() || t.SettledLocked() })
			pool = append(pool, t)
		}
		for _, t := range pool {
			e.Main.JoinNative(t)
		}
		return nil
	})
	if capture != nil {
		must(capture.Close(e.Main))
	}
	return nil
}
