package programs

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"logjam/scenario/schedule"
	"logjam/sim"
	"logjam/sim/lazyinit"
)

// The random family: R plays a random fault schedule (package schedule)
// given with -schedule; its contract is the schedule's. Interleavings come
// from barriers on the wait-for graph and the GIL's FIFO handoff, never
// from sleeps.
func init() { play(&Program{ID: "R", Run: playSchedule}) }

func playSchedule(e *Env) *sim.PyErr {
	s, err := schedule.Decode(e.Schedule)
	must(err)
	if want, got := s.Failpoints().Env(), os.Getenv("GO_FAILPOINTS"); want != got {
		panic(fmt.Sprintf("the schedule runs with GO_FAILPOINTS=%q, not %q", want, got))
	}
	if s.Lazy != nil {
		return playLazy(e, s.Variant, s.Lazy)
	}
	return (&sinkPlayer{e: e, s: s.Sink}).play()
}

// sinkPlayer plays a sink schedule: the workload (the threads, their
// calls and lines, the lines outside a call, as the threads and outside
// axes say) is played here, and every other axis by its child half
// (axisPlay, random_<axis>.go), which plugs into the workload's hook
// points. The nemesis's state (the stalls, their SIGINTs and resumes) is
// nemesis's (random_stalls.go).
type sinkPlayer struct {
	e        *Env
	s        *schedule.Sink
	threads  []*sim.Thread
	backends [2]*sim.Backend
	// halves are the schedule's axes' child halves, in the order of
	// schedule.Axes.
	halves []axisPlay
	// scriptDone: the main thread has joined every thread; the script's
	// last statement is behind it, so neither the stall at the start nor
	// one at a line sends a SIGINT from here on (it would reach no caller:
	// the contract's edge).
	scriptDone atomic.Bool
	nemesis
}

// An axisPlay is the child's half of a schedule axis (schedule.Axis): what
// the axis does at the workload's hook points, each called for every
// axis's half in the order of schedule.Axes. A half embeds noPlay for the
// hooks it has nothing at, and registers itself with playAxis from its own
// file. Every hook runs on the thread named (the main thread where none
// is), GIL held, unless it says otherwise.
type axisPlay interface {
	// beforeThreads: before the threads start (fd 2's forwarder,
	// sys.stderr, a SIGINT handler, the stall at the start).
	beforeThreads(p *sinkPlayer)
	// threadsStarted: every thread is started and queued for the GIL; the
	// main thread's first call is next.
	threadsStarted(p *sinkPlayer)
	// atLine: the call at.c is about to log its line n (n == at.c.Lines:
	// its lines are done), its backend's lock held.
	atLine(p *sinkPlayer, at callAt, n int)
	// afterLines: the call logged its own lines, its backend's lock held
	// (a pool's workers log then).
	afterLines(p *sinkPlayer, at callAt)
	// callEnds: the call's last moment with its backend's lock held (an
	// abort ends the run there).
	callEnds(p *sinkPlayer, at callAt)
	// joined: the main thread has joined every thread; its own lines
	// outside a call are next.
	joined(p *sinkPlayer)
	// scriptEnds: the main thread has logged its lines outside a call:
	// the script's last statements (a fork, the capture of fd 2 left). A
	// non-nil exception ends the script there.
	scriptEnds(p *sinkPlayer) *sim.PyErr
	// atExit: the interpreter exits (daemon threads); the exception is the
	// run's.
	atExit(p *sinkPlayer) *sim.PyErr
}

// callAt is where a call is: thread Thread's call Call (-1 and -1 for a
// nested call), on t, its backend be; First and Last: the main thread's
// first and last top-level call.
type callAt struct {
	t            *sim.Thread
	Thread, Call int
	c            schedule.Call
	be           *sim.Backend
	First, Last  bool
}

// noPlay is what a half embeds for the hooks it has nothing at.
type noPlay struct{}

func (noPlay) beforeThreads(*sinkPlayer)         {}
func (noPlay) threadsStarted(*sinkPlayer)        {}
func (noPlay) atLine(*sinkPlayer, callAt, int)   {}
func (noPlay) afterLines(*sinkPlayer, callAt)    {}
func (noPlay) callEnds(*sinkPlayer, callAt)      {}
func (noPlay) joined(*sinkPlayer)                {}
func (noPlay) scriptEnds(*sinkPlayer) *sim.PyErr { return nil }
func (noPlay) atExit(*sinkPlayer) *sim.PyErr     { return nil }

// axisPlays are the registered child halves, by axis name: each makes the
// half for one run of a schedule, or nil when the schedule has nothing of
// the axis to play.
var axisPlays = map[string]func(k *schedule.Sink) axisPlay{}

// playAxis registers the child half of the axis named name (from its
// file's init); a name no axis has, or one registered twice, panics at
// the child's start, and so every test of this package.
func playAxis(name string, half func(k *schedule.Sink) axisPlay) {
	if !slices.ContainsFunc(schedule.Axes, func(a schedule.Axis) bool { return a.Name() == name }) {
		panic(fmt.Sprintf("playAxis(%q): no such axis in schedule.Axes", name))
	}
	if axisPlays[name] != nil {
		panic(fmt.Sprintf("playAxis(%q): registered twice", name))
	}
	axisPlays[name] = half
}

func (p *sinkPlayer) play() *sim.PyErr {
	e, k := p.e, p.s
	rt, in, main := e.RT, e.RT.In, e.Main
	for _, a := range schedule.Axes {
		if half := axisPlays[a.Name()]; half != nil {
			if h := half(k); h != nil {
				p.halves = append(p.halves, h)
			}
		}
	}
	for _, h := range p.halves {
		h.beforeThreads(p)
	}

	p.backends = [2]*sim.Backend{rt.NewBackend("xnnpack"), rt.NewBackend("vulkan")}
	p.threads = []*sim.Thread{main}
	for i := 1; i < len(k.Threads); i++ {
		i := i
		t := in.Start(fmt.Sprintf("T%d", i), false, func(t *sim.Thread) *sim.PyErr {
			p.calls(t, i)
			return nil
		})
		p.threads = append(p.threads, t)
		// Queued for the GIL in the order made: the FIFO handoff decides
		// who runs next, not the Go scheduler.
		in.G.WaitUntil(func() bool { return slices.Contains(in.GIL.WaitersLocked(), t) })
	}
	for _, h := range p.halves {
		h.threadsStarted(p)
	}
	p.calls(main, 0)
	for _, t := range p.threads[1:] {
		main.Join(t)
		p.evalCheck(main, "in join") // a Ctrl-C another thread's write let through
	}
	p.scriptDone.Store(true)
	for _, h := range p.halves {
		h.joined(p)
	}
	p.outside(main, k.Outside, k.OutsideText)
	for _, h := range p.halves {
		if err := h.scriptEnds(p); err != nil {
			return err
		}
	}
	for _, h := range p.halves {
		if exc := h.atExit(p); exc != nil {
			return exc
		}
	}
	return nil
}

// calls runs thread i's calls.
func (p *sinkPlayer) calls(t *sim.Thread, i int) {
	calls := p.s.Threads[i].Calls
	for j, c := range calls {
		at := callAt{t: t, Thread: i, Call: j, c: c, be: p.backends[c.Backend], First: i == 0 && j == 0, Last: i == 0 && j == len(calls)-1}
		p.e.call(t, "execute", func() *sim.NativeError { return p.body(at) })
		// The script's next bytecode: a Ctrl-C still pending (the call
		// raised something else first) raises there.
		p.evalCheck(t, "after execute")
		if c.Yield {
			t.SwitchGIL() // the eval loop's switch between two calls
		}
	}
	p.outside(t, p.s.Threads[i].Outside, p.s.Threads[i].OutsideText)
}

// outside logs n lines outside any call, GIL held (a destructor), with
// text's class (nil: 128 ASCII bytes).
func (p *sinkPlayer) outside(t *sim.Thread, n int, text *schedule.Text) {
	for i := 0; i < n; i++ {
		if text == nil {
			p.e.RT.Log(t, sim.Info, "module.cpp", 58, "%s", sim.Filler(i, lineMsg128))
			continue
		}
		p.e.RT.LogBytes(t, sim.Info, "module.cpp", 58, message(schedule.Call{Size: text.Size, CJK: text.CJK, Invalid: text.Invalid}, i))
	}
}

// body is a call's native body: holding its backend's lock, it logs its
// lines, the axes' halves at each hook point.
func (p *sinkPlayer) body(at callAt) *sim.NativeError {
	t, c, rt := at.t, at.c, p.e.RT
	at.be.L.Acquire(t)
	if c.WaitFor > 0 {
		// The seeded switch point: the other thread runs up to its next wait.
		rt.G.WaitUntilIdle(p.threads[c.WaitFor-1])
	}
	lvl := sim.Level(c.Level[0])
	for n := 0; n <= c.Lines; n++ {
		for _, h := range p.halves {
			h.atLine(p, at, n)
		}
		if n < c.Lines {
			rt.LogBytes(t, lvl, at.be.Name+"_backend.cpp", 211, message(c, n))
		}
	}
	for _, h := range p.halves {
		h.afterLines(p, at)
	}
	for _, h := range p.halves {
		h.callEnds(p, at)
	}
	at.be.L.Release(t)
	if c.Nested != nil {
		// The native code calls back into Python (GIL held); the callback
		// makes a binding call and catches what it raises.
		nested := callAt{t: t, Thread: -1, Call: -1, c: *c.Nested, be: p.backends[c.Nested.Backend]}
		p.e.call(t, "execute (nested, from a callback)", func() *sim.NativeError { return p.body(nested) })
	}
	if c.Fails {
		return &sim.NativeError{Type: "RuntimeError", Msg: []byte("Execution failed: " + strings.Repeat("错", c.FailChars))}
	}
	return nil
}

// message is line n of a call: ASCII filler or three-byte characters after
// a one-byte prefix, with an invalid byte where the schedule puts one.
func message(c schedule.Call, n int) []byte {
	var b []byte
	if c.CJK {
		b = []byte(fmt.Sprintf("%d ", n) + strings.Repeat("错", c.Size/3+1))[:c.Size]
	} else {
		b = []byte(sim.Filler(n, c.Size))
	}
	if c.Invalid > 0 && c.Invalid <= len(b) {
		b[c.Invalid-1] = 0xff
	}
	return b
}

// playLazy plays a lazy-init script on one machine: the race first (if
// any), then the main thread's operations, then init() so that every
// queued callback has its chance to run.
func playLazy(e *Env, variant string, l *schedule.Lazy) *sim.PyErr {
	e.Variant, e.Backend = variant, l.Backend
	m, t := e.lazyMachine(), e.Main
	if l.Race {
		forcedRace(e, m)
	}
	for i, op := range l.Ops {
		switch op {
		case schedule.OpCall:
			m.LazyCall(t, m.NewCallback(fmt.Sprintf("op %d: lambda: record()", i), nil), lazyinit.Plain)
		case schedule.OpCallRNG:
			s := int64(100 + i)
			m.LazyCall(t, m.NewCallback(fmt.Sprintf("op %d: lambda: set_rng_state(%d)", i, s), func(t *sim.Thread) { m.SetRNGState(t, s) }), lazyinit.Plain)
		case schedule.OpCallSeed:
			m.LazyCall(t, m.NewCallback(fmt.Sprintf("op %d: lambda: manual_seed(42)", i), func(t *sim.Thread) { m.ManualSeed(t, 42) }), lazyinit.Plain)
		case schedule.OpInit:
			m.Init(t)
		case schedule.OpGetRNG:
			m.GetRNGState(t)
		}
	}
	m.Init(t)
	e.lazyReport(m)
	return nil
}
