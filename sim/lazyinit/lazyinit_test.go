package lazyinit_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"logjam/failpoints"
	"logjam/sim"
	"logjam/sim/lazyinit"
	"logjam/sim/policy"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the contention schedules (0: $LOGJAM_SEED, else a fresh one)")

// The tests share one simulated runtime (sim.New installs signal handlers and
// looks at fds 2 and 3, so once per process). It stays referenced for the
// life of the process: its telemetry wraps fd 3 in an *os.File whose
// finalizer would close that fd.
var (
	rtOnce sync.Once
	testRT *sim.Runtime
	rtErr  error
)

func runtimeForTest(t *testing.T) *sim.Runtime {
	t.Helper()
	rtOnce.Do(func() {
		mk, _ := policy.ByName("merged")
		testRT, rtErr = sim.New(sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}, Policy: mk})
		if rtErr == nil {
			testRT.Main.ReleaseGIL() // the test goroutine is no Python thread
		}
	})
	if rtErr != nil {
		t.Fatalf("sim.New: %v", rtErr)
	}
	return testRT
}

var threadSeq atomic.Int64

// runPython runs fn on a new Python thread (holding the GIL) and reports
// whether it ended within d. A thread that did not end stays blocked: a
// self-wait never returns, in the model as in CPython.
func runPython(rt *sim.Runtime, d time.Duration, m *lazyinit.Machine, fn func(th *sim.Thread)) (ended bool) {
	th := rt.In.Start(fmt.Sprintf("T%d", threadSeq.Add(1)), true, func(th *sim.Thread) *sim.PyErr { fn(th); return nil })
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-th.Done():
			return true
		case <-tick.C:
			if m.SelfWaits() > 0 {
				return false
			}
		case <-deadline.C:
			return false
		}
	}
}

// TestSeedScripts plays the seed's two single-thread scripts in-process for
// every variant: L1 and L2 of the matrix, without the child.
func TestSeedScripts(t *testing.T) {
	rt := runtimeForTest(t)
	scripts := map[string]func(m *lazyinit.Machine, th *sim.Thread){
		"L1": func(m *lazyinit.Machine, th *sim.Thread) {
			m.Init(th)
			s := m.GetRNGState(th) + 7
			m.LazyCall(th, m.NewCallback("lambda: set_rng_state(s)", func(th *sim.Thread) { m.SetRNGState(th, s) }), lazyinit.Plain)
		},
		"L2": func(m *lazyinit.Machine, th *sim.Thread) {
			m.LazyCall(th, m.NewCallback("lambda: manual_seed(42)", func(th *sim.Thread) { m.ManualSeed(th, 42) }), lazyinit.Plain)
			m.Init(th)
		},
	}
	want := map[string]map[lazyinit.Variant]string{
		"L1": {lazyinit.Old: "self-wait", lazyinit.InitFast: "ok", lazyinit.NoRace: "ok", lazyinit.Fixed: "ok"},
		"L2": {lazyinit.Old: "self-wait", lazyinit.InitFast: "self-wait", lazyinit.NoRace: "ok", lazyinit.Fixed: "ok"},
	}
	for _, id := range []string{"L1", "L2"} {
		for _, v := range lazyinit.Variants {
			for _, b := range lazyinit.Backends {
				m := lazyinit.New(rt.G, nil, b, v)
				got := "ok"
				if !runPython(rt, 5*time.Second, m, func(th *sim.Thread) { scripts[id](m, th) }) {
					got = "did not end"
					if m.SelfWaits() > 0 {
						got = "self-wait"
					}
				}
				st := m.Stats()
				if got == "ok" && (len(st.Lost) > 0 || len(st.Twice) > 0 || st.Ran != 2) {
					got = fmt.Sprintf("lost %v, twice %v, ran %d", st.Lost, st.Twice, st.Ran)
				}
				if got != want[id][v] {
					t.Errorf("%s %s %s: %s, want %s", id, v, b, got, want[id][v])
				}
			}
		}
	}
}

func contentionSeed(t *testing.T) uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if s := os.Getenv("LOGJAM_SEED"); s != "" && s != "0" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LOGJAM_SEED=%q: want a whole number", s)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// contention is one run of the contention check.
type contention struct {
	variant lazyinit.Variant
	workers int
	rounds  int
	// switchP: at each PointSwitch a worker hands the GIL over with this
	// probability (CPython's switch interval, made explicit).
	switchP float64
	// forceP: at PointBeforeLock a worker pauses, GIL released, until the
	// backend is initialized, with this probability (the L3 forcing hook).
	forceP float64
}

type tally struct {
	submitted, ran, superseded, lost, twice, forced int
	paths                                           map[string]int
	lostIDs, twiceIDs                               []string
}

// run races initialization against lazy calls: each round builds a fresh
// machine (backend chosen by the seed) and gives every worker thread a few
// operations; worker 0, and sometimes worker 1, call init() first, the others
// submit callbacks (_lazy_call of a lambda that re-enters through
// set_rng_state or manual_seed, set_rng_state, manual_seed, manual_seed_all)
// and sometimes init() afterwards. The seed fixes every choice (roles,
// operations, where the GIL is handed over, which passes are forced); the
// exact interleaving also depends on the Go scheduler.
func (c contention) run(t *testing.T) tally {
	t.Helper()
	rt := runtimeForTest(t)
	seed := contentionSeed(t)
	t.Logf("seed %d (rerun: go test ./sim/lazyinit -run '%s$' -args -seed=%d, or LOGJAM_SEED=%d)", seed, t.Name(), seed, seed)

	// Worker threads live across rounds; a round hands each one job.
	type job struct {
		m   *lazyinit.Machine
		ops []func(m *lazyinit.Machine, th *sim.Thread)
	}
	jobs := make([]chan job, c.workers)
	done := make(chan int, c.workers)
	rngs := map[*sim.Thread]*rand.Rand{} // each used only by its own thread
	initializer := map[*sim.Thread]bool{}
	var forced atomic.Int64
	var forceTimeouts atomic.Int64
	threads := make([]*sim.Thread, c.workers)
	ready := make(chan struct{})
	for i := range c.workers {
		jobs[i] = make(chan job)
		threads[i] = rt.In.StartNative(fmt.Sprintf("%s-w%d", c.variant, i), true, func(th *sim.Thread) {
			<-ready
			for j := range jobs[i] {
				th.AcquireGIL()
				for _, op := range j.ops {
					op(j.m, th)
				}
				th.ReleaseGIL()
				done <- i
			}
		})
		rngs[threads[i]] = rand.New(rand.NewPCG(seed, uint64(i)+1))
	}
	initializer[threads[0]] = true
	close(ready)
	defer func() {
		for _, ch := range jobs {
			close(ch)
		}
	}()

	scope := failpoints.NewScope()
	defer scope.Close()
	offSwitch, err := lazyinit.EnableHook(scope, lazyinit.PointSwitch, func(m *lazyinit.Machine, th *sim.Thread, _ lazyinit.Where) {
		r, ok := rngs[th]
		if !ok || r.Float64() >= c.switchP {
			return
		}
		th.ReleaseGIL()
		runtime.Gosched()
		th.AcquireGIL()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer offSwitch()
	offForce, err := lazyinit.EnableHook(scope, lazyinit.PointBeforeLock, func(m *lazyinit.Machine, th *sim.Thread) {
		r, ok := rngs[th]
		if !ok || initializer[th] || r.Float64() >= c.forceP {
			return
		}
		forced.Add(1)
		th.ReleaseGIL()
		select {
		case <-m.InitDone():
		case <-time.After(2 * time.Second):
			forceTimeouts.Add(1)
		}
		th.AcquireGIL()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer offForce()

	type op = func(m *lazyinit.Machine, th *sim.Thread)
	submitters := []op{
		func(m *lazyinit.Machine, th *sim.Thread) {
			m.LazyCall(th, m.NewCallback("lambda: set_rng_state(7)", func(th *sim.Thread) { m.SetRNGState(th, 7) }), lazyinit.Plain)
		},
		func(m *lazyinit.Machine, th *sim.Thread) {
			m.LazyCall(th, m.NewCallback("lambda: manual_seed(42)", func(th *sim.Thread) { m.ManualSeed(th, 42) }), lazyinit.Plain)
		},
		func(m *lazyinit.Machine, th *sim.Thread) { m.SetRNGState(th, 9) },
		func(m *lazyinit.Machine, th *sim.Thread) { m.ManualSeed(th, 1) },
		func(m *lazyinit.Machine, th *sim.Thread) { m.ManualSeedAll(th, 2) },
	}
	initOp := func(m *lazyinit.Machine, th *sim.Thread) { m.Init(th) }

	plan := rand.New(rand.NewPCG(seed, 0))
	tl := tally{paths: map[string]int{}}
	for round := range c.rounds {
		b := lazyinit.Backends[plan.IntN(len(lazyinit.Backends))]
		m := lazyinit.New(rt.G, nil, b, c.variant)
		twoInits := plan.IntN(3) == 0
		for i := range threads {
			var ops []op
			if i == 0 || (i == 1 && twoInits) {
				ops = append(ops, initOp)
			}
			for range 1 + plan.IntN(2) {
				ops = append(ops, submitters[plan.IntN(len(submitters))])
			}
			if i > 1 && plan.IntN(4) == 0 {
				ops = append(ops, initOp)
			}
			jobs[i] <- job{m: m, ops: ops}
		}
		deadline := time.NewTimer(5 * time.Second)
		for range c.workers {
			select {
			case <-done:
			case <-deadline.C:
				snap, _ := json.MarshalIndent(rt.G.Snapshot(), "", " ")
				t.Fatalf("round %d (%s): a worker did not finish within 5s (seed %d); self-waits %d; lock table:\n%s",
					round, b, seed, m.SelfWaits(), snap)
			}
		}
		deadline.Stop()
		st := m.Stats()
		if !m.IsInitialized() {
			t.Fatalf("round %d: %s not initialized after init() (seed %d)", round, b, seed)
		}
		tl.submitted += st.Submitted
		tl.ran += st.Ran
		tl.superseded += st.Superseded
		tl.lost += len(st.Lost)
		tl.twice += len(st.Twice)
		for p, n := range st.Paths {
			tl.paths[p] += n
		}
		if len(tl.lostIDs) < 10 {
			tl.lostIDs = append(tl.lostIDs, st.Lost...)
		}
		tl.twiceIDs = append(tl.twiceIDs, st.Twice...)
	}
	tl.forced = int(forced.Load())
	if n := forceTimeouts.Load(); n > 0 {
		t.Errorf("%d forced pauses waited 2s without the backend being initialized (seed %d)", n, seed)
	}
	paths := make([]string, 0, len(tl.paths))
	for p, n := range tl.paths {
		paths = append(paths, fmt.Sprintf("%s=%d", p, n))
	}
	sort.Strings(paths)
	t.Logf("%s: %d rounds x %d workers: %d callbacks submitted, %d ran, %d superseded seeds, %d lost, %d ran twice; %d forced pauses; runs by path: %v",
		c.variant, c.rounds, c.workers, tl.submitted, tl.ran, tl.superseded, tl.lost, tl.twice, tl.forced, paths)
	return tl
}

// TestContentionFixed: under fixed, with the GIL handed over at random and
// the L3 pause forced at random, every callback runs exactly once (a seed
// callback replaced by a later manual_seed before the drain is the one
// exception, by design of _LazySeedTracker) over 1,000 rounds.
func TestContentionFixed(t *testing.T) {
	tl := contention{variant: lazyinit.Fixed, workers: 4, rounds: 1000, switchP: 0.3, forceP: 0.25}.run(t)
	if tl.lost != 0 || tl.twice != 0 {
		t.Fatalf("fixed: %d callbacks lost (%v), %d ran twice (%v)", tl.lost, tl.lostIDs, tl.twice, tl.twiceIDs)
	}
	if tl.ran+tl.superseded != tl.submitted {
		t.Fatalf("fixed: %d submitted, %d ran, %d superseded", tl.submitted, tl.ran, tl.superseded)
	}
	if tl.paths[lazyinit.PathRunNow] == 0 {
		t.Fatalf("fixed: the run_now path never ran; the race was not exercised")
	}
}

// TestContentionNoRace: norace has no run_now. With the GIL handed over only
// where a thread blocks (no random switches), the forced L3 pause is the only
// way a thread can pass the checks before the drain and take the lock after
// it: each forced pause queues a callback after the drain, and nothing ever
// runs it. With random switches as well, more are lost.
func TestContentionNoRace(t *testing.T) {
	t.Run("forced", func(t *testing.T) {
		tl := contention{variant: lazyinit.NoRace, workers: 4, rounds: 200, forceP: 0.25}.run(t)
		if tl.twice != 0 {
			t.Fatalf("norace: %d callbacks ran twice (%v)", tl.twice, tl.twiceIDs)
		}
		if tl.lost < 1 {
			t.Fatalf("norace: no lost callback in 200 rounds with %d forced pauses", tl.forced)
		}
		t.Logf("norace, forced pauses only: %d lost callbacks for %d forced pauses, e.g. %v", tl.lost, tl.forced, tl.lostIDs)
	})
	t.Run("forced-and-switches", func(t *testing.T) {
		tl := contention{variant: lazyinit.NoRace, workers: 4, rounds: 200, switchP: 0.3, forceP: 0.25}.run(t)
		if tl.twice != 0 || tl.lost < 1 {
			t.Fatalf("norace: %d lost, %d ran twice (%v)", tl.lost, tl.twice, tl.twiceIDs)
		}
		t.Logf("norace, forced pauses and random switches: %d lost callbacks", tl.lost)
	})
}
