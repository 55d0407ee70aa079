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
func workersLogInCall(e *Env, forwarded bool, lines int) *sim.PyErr {
	rt := e.RT
	var capture *sim.FD2Capture
	if forwarded {
		capture = captureFD2(e, sim.Wurlitzer)
	}
	be := rt.NewBackend("xnnpack")
	e.call(e.Main, "execute", func() *sim.NativeError {
		runPool(e, e.Main, poolWorkers, lines, func(w int) string { return fmt.Sprintf("W%d", w) }, func(t *sim.Thread, w, n int) {
			rt.Log(t, sim.Info, be.Name+"_threadpool.cpp", 88, "partition %d step %d: %s", w, n, sim.Filler(n, lineMsg128-24))
		})
		return nil
	})
	if capture != nil {
		must(capture.Close(e.Main))
	}
	return nil
}

// runPool runs a call's thread pool: workers native threads (named by
// name), each logging lines lines (log), while caller waits for them
// holding the GIL (Thread.JoinNative). Each is started only once the one
// before it has logged its first line, waits for something or has ended,
// so the order the workers begin in is the model's state, not the Go
// scheduler's (rows D3 and D4, the schedule axis pool).
func runPool(e *Env, caller *sim.Thread, workers, lines int, name func(w int) string, log func(t *sim.Thread, w, n int)) {
	in := e.RT.In
	var pool []*sim.Thread
	for w := range workers {
		first := in.NewEvent(name(w) + " logged its first line")
		t := in.StartNative(name(w), false, func(t *sim.Thread) {
			for n := range lines {
				log(t, w, n)
				if n == 0 {
					first.Set(in)
				}
			}
		})
		// The next worker starts once this one logged its first line, or
		// went as far as it can before that: settled, or waiting for room
		// the parent's reader gives (a stalled terminal or pipe, which the
		// stall's nemesis resumes only once the caller waits too:
		// TestAPoolWorkerBlockedOnAStalledReaderLetsTheNextStart).
		in.G.WaitUntil(func() bool {
			_, room := t.WaitStateLocked().For.(*sim.PipeRoom)
			return first.IsSetLocked() || t.SettledLocked() || room
		})
		pool = append(pool, t)
	}
	for _, t := range pool {
		caller.JoinNative(t)
	}
}
