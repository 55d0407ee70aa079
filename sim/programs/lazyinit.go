package programs

import (
	"fmt"
	"strings"
	"sync/atomic"

	"logjam/sim"
	"logjam/sim/lazyinit"
)

// The lazy device initialization family (docs/SCENARIOS.md, "Matrix: lazy device
// initialization"): each program takes -variant and -backend and plays one
// script against a fresh lazyinit.Machine. Contract: the script must print
// done, and every callback it hands to _lazy_call (directly, or through
// set_rng_state / manual_seed inside a callback) must run once.
func init() {
	play(&Program{ID: "L1", Run: lazyInitialized, Check: checkLazy})
	play(&Program{ID: "L2", Run: lazyQueuedDuringDrain, Check: checkLazy})
	play(&Program{ID: "L3", Run: lazyForcedRace, Check: checkLazy})
}

// checkLazy validates -variant and -backend: both required.
func checkLazy(variant, backend string) error {
	var missing []string
	if variant == "" {
		missing = append(missing, "-variant (accepted: old, initfast, norace, fixed)")
	}
	if backend == "" {
		missing = append(missing, "-backend (accepted: cuda, xpu, mtia)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("lazy-init scenarios need %s", strings.Join(missing, " and "))
	}
	if _, err := lazyinit.ParseVariant(variant); err != nil {
		return fmt.Errorf("-variant: %v", err)
	}
	if _, err := lazyinit.ParseBackend(backend); err != nil {
		return fmt.Errorf("-backend: %v", err)
	}
	return nil
}

func (e *Env) lazyMachine() *lazyinit.Machine {
	v, err := lazyinit.ParseVariant(e.Variant)
	must(err)
	b, err := lazyinit.ParseBackend(e.Backend)
	must(err)
	return lazyinit.New(e.RT.G, e.RT.Tel, b, v)
}

func (e *Env) lazyReport(m *lazyinit.Machine) {
	st := m.Stats()
	e.RT.In.Print(fmt.Sprintf("%s (%s): initialized=%v generator=%d callbacks submitted=%d queued=%d ran=%d lost=%d",
		m.Backend, m.Variant, m.IsInitialized(), m.Generator(), st.Submitted, st.Queued, st.Ran, len(st.Lost)))
}

// lazyInitialized is Path 1 (the seed's first regression script):
//
//	torch.cuda.init()
//	state = torch.cuda.get_rng_state()
//	torch.cuda._lazy_call(lambda: torch.cuda.set_rng_state(state))
//	print("done")
func lazyInitialized(e *Env) *sim.PyErr {
	m, t := e.lazyMachine(), e.Main
	m.Init(t)
	state := m.GetRNGState(t) + 7
	m.LazyCall(t, m.NewCallback("lambda: set_rng_state(state)", func(t *sim.Thread) { m.SetRNGState(t, state) }), lazyinit.Plain)
	e.lazyReport(m)
	return nil
}

// lazyQueuedDuringDrain is Path 2 (the seed's second script):
//
//	torch.cuda._lazy_call(lambda: torch.cuda.manual_seed(42))
//	torch.cuda.init()
//	print("done")
func lazyQueuedDuringDrain(e *Env) *sim.PyErr {
	m, t := e.lazyMachine(), e.Main
	m.LazyCall(t, m.NewCallback("lambda: manual_seed(42)", func(t *sim.Thread) { m.ManualSeed(t, 42) }), lazyinit.Plain)
	m.Init(t)
	e.lazyReport(m)
	return nil
}

// lazyForcedRace forces the interleaving run_now exists for, without a sleep:
//
//	torch.cuda._lazy_call(lambda: record("queued before the race"))
//	A: torch.cuda._lazy_call(lambda: torch.cuda.set_rng_state(s))
//	   -- passes the fast-path checks; pauses before `with _initialization_lock`
//	B: a_paused.wait(); torch.cuda.init()   -- initializes and drains
//	A: goes on once B has released the lock
//	A.join(); B.join(); print("done")
//
// A's pause releases the GIL (the switch interval hands it to B); A takes it
// back after B has set _initialized and released the lock. The barrier is a
// wait for a state of the graph (Graph.WaitUntil), never for time.
func lazyForcedRace(e *Env) *sim.PyErr {
	m := e.lazyMachine()
	forcedRace(e, m)
	e.lazyReport(m)
	return nil
}

// forcedRace plays L3's race on m (random schedules play it too).
func forcedRace(e *Env, m *lazyinit.Machine) {
	in := e.RT.In
	m.LazyCall(e.Main, m.NewCallback("lambda: record('queued before the race')", nil), lazyinit.Plain)

	aPaused := in.NewEvent("A passed the fast-path checks")
	var once atomic.Bool
	disable, err := lazyinit.EnableHook(e.FP, lazyinit.PointBeforeLock, func(hm *lazyinit.Machine, t *sim.Thread) {
		// Only A's first pass: its nested _lazy_call must not pause again
		// (under old it would wait for a lock it holds, outside the graph).
		if hm != m || t.Name != "A" || !once.CompareAndSwap(false, true) {
			return
		}
		aPaused.Set(in)
		t.ReleaseGIL()
		in.G.WaitUntil(func() bool { return hm.IsInitialized() && hm.Lock.OwnerLocked() == nil })
		t.AcquireGIL()
	})
	must(err)
	defer disable()

	const s = 1234
	a := in.Start("A", false, func(t *sim.Thread) *sim.PyErr {
		m.LazyCall(t, m.NewCallback("lambda: set_rng_state(s)", func(t *sim.Thread) { m.SetRNGState(t, s) }), lazyinit.Plain)
		return nil
	})
	b := in.Start("B", false, func(t *sim.Thread) *sim.PyErr {
		aPaused.Wait(t)
		m.Init(t)
		return nil
	})
	e.Main.Join(a)
	e.Main.Join(b)
}
