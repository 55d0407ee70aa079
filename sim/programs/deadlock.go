package programs

import (
	"slices"

	"logjam/failpoints"
	"logjam/sim"
)

func init() {
	play(&Program{ID: "D1", Run: func(e *Env) *sim.PyErr { return loadVersusExecute(e, false) }})
	play(&Program{ID: "D2", Run: func(e *Env) *sim.PyErr { return loadVersusExecute(e, true) }})
}

// loadVersusExecute is the seed's deadlock: A holds the GIL and lock L and
// logs; B, queued on the GIL, gets it whenever A's log write releases it, and
// then waits for L while holding the GIL. The barrier makes the interleaving
// deterministic without a sleep: A logs only once B is queued on the GIL.
func loadVersusExecute(e *Env, slow bool) *sim.PyErr {
	rt, in := e.RT, e.RT.In
	be := rt.NewBackend("xnnpack")
	if slow {
		in.SetStderr(sim.NewMemStream("slow StringIO"))
		must(e.FP.Enable(failpoints.StreamWriteDelay, "return(20)"))
	}
	must(e.FP.Enable(failpoints.BackendLoadFails, "return(18)"))
	loadHolds := in.NewEvent("A's load holds the backend lock")
	var b *sim.Thread
	must(e.FP.EnableHook(failpoints.BackendLoadLocked, func(t *sim.Thread) {
		if t.Name != "A" {
			return
		}
		loadHolds.Set(in)
		in.G.WaitUntil(func() bool { return slices.Contains(in.GIL.WaitersLocked(), b) })
	}))
	a := in.Start("A", false, func(t *sim.Thread) *sim.PyErr {
		e.call(t, "load_method", func() *sim.NativeError { return be.LoadMethod(t, "forward") })
		return nil
	})
	b = in.Start("B", false, func(t *sim.Thread) *sim.PyErr {
		loadHolds.Wait(t)
		e.call(t, "execute", func() *sim.NativeError { return be.Execute(t) })
		return nil
	})
	e.Main.Join(a)
	e.Main.Join(b)
	return nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
