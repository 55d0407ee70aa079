package programs

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"logjam/internal/pytext"
	"logjam/pipes"
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

type sinkPlayer struct {
	e        *Env
	s        *schedule.Sink
	threads  []*sim.Thread
	backends [2]*sim.Backend
	// stallEnded: the stall of fd 2 has been ended (by a blocked write or
	// the abort), once.
	stallEnded atomic.Bool
	// scriptDone: the main thread has joined every thread; the script's
	// last statement is behind it, so neither the stall at the start nor
	// one at a line sends a SIGINT from here on (it would reach no caller:
	// the contract's edge).
	scriptDone atomic.Bool
	// stalls: the stalls that start at marks (schedule.Stall); live[i]
	// while stall i is on and not yet felt.
	live []atomic.Bool
	// sigints: observers that may send a SIGINT on a blocked write and have
	// not yet decided (or whose SIGINT has not yet reached the model); a
	// timed stall's resume waits for them (resumeOnceSettled).
	sigints pendingSIGINTs
	// resumes counts the fd2-resume marks sent. The reader's stop is one
	// state: stalls felt by one blocked write end with the first resume,
	// and each observer sends its resume only if none came since its stall
	// began (sendResume): otherwise two timed stalls felt by one write
	// each send one, and the later, sent after a new stall began, ends
	// that stall at once (docs/TRUST.md, "A resume ends only its own
	// stall"; pinned by suites/random's entry "seed 4049447: adaptive LOST
	// (a stale resume does not end a later stall)").
	resumeMu sync.Mutex
	resumes  int
}

func (p *sinkPlayer) play() *sim.PyErr {
	e, k := p.e, p.s
	rt, in, main := e.RT, e.RT.In, e.Main
	p.sigints.fd2 = rt.FD2
	p.installHandler()
	capture := p.arrangeFD2()
	p.arrangeStderr()
	p.startInitialStall()

	if len(k.FD2.Stalls) > 0 {
		p.live = make([]atomic.Bool, len(k.FD2.Stalls))
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
	for _, st := range k.FD2.Stalls {
		if st.SigintThread > 0 {
			rt.FD2.DeliverSIGINTTo(p.threads[st.SigintThread])
		}
	}
	p.calls(main, 0)
	for _, t := range p.threads[1:] {
		main.Join(t)
		p.evalCheck(main, "in join") // a Ctrl-C another thread's write let through
	}
	p.scriptDone.Store(true)
	for i, st := range k.FD2.Stalls {
		if st.At == schedule.StallAtExit {
			p.startStall(main, i)
		}
	}
	p.armCrash()
	p.outside(main, k.Outside, k.OutsideText)
	if err := p.fork(); err != nil {
		return err
	}
	if capture != nil {
		must(capture.Close(main))
	}
	var exc *sim.PyErr
	if k.Daemons > 0 {
		exc = daemonsLogAtExit(e, k.Daemons, false, false)
	}
	return exc
}

// calls runs thread i's calls; the main thread's last call carries the
// schedule's abort, its first the SIGINT after a line.
func (p *sinkPlayer) calls(t *sim.Thread, i int) {
	calls := p.s.Threads[i].Calls
	for j, c := range calls {
		p.e.call(t, "execute", func() *sim.NativeError {
			return p.body(t, i, j, c, i == 0 && j == 0, i == 0 && j == len(calls)-1)
		})
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

func (p *sinkPlayer) body(t *sim.Thread, i, j int, c schedule.Call, first, last bool) *sim.NativeError {
	e, k, rt := p.e, p.s, p.e.RT
	be := p.backends[c.Backend]
	be.L.Acquire(t)
	if c.WaitFor > 0 {
		// The seeded switch point: the other thread runs up to its next wait.
		rt.G.WaitUntilIdle(p.threads[c.WaitFor-1])
	}
	lvl := sim.Level(c.Level[0])
	sigintAt := -1
	if first && k.Sigint == schedule.SigintLine {
		sigintAt = k.SigintAt
	}
	for n := 0; n <= c.Lines; n++ {
		if n == sigintAt {
			p.sigint(t)
		}
		for s, st := range k.FD2.Stalls {
			if st.At == schedule.StallAtLine && st.Thread == i && st.Call == j && st.Line == n {
				p.startStall(t, s)
			}
		}
		if n < c.Lines {
			rt.LogBytes(t, lvl, be.Name+"_backend.cpp", 211, message(c, n))
		}
	}
	if c.Pool != nil {
		p.pool(t, c)
	}
	if last && k.Abort != nil {
		stalled := k.FD2.StallMs > 0 || len(k.FD2.Stalls) > 0
		if stalled {
			// The stalls end here if no blocked write ended them.
			if k.FD2.StallMs > 0 && p.stallEnded.CompareAndSwap(false, true) {
				pauseFD2(e, 0)
			}
			for s := range p.live {
				if p.live[s].CompareAndSwap(true, false) {
					p.resumeMu.Lock()
					p.resumeLocked()
					p.resumeMu.Unlock()
				}
			}
		}
		p.othersSettled(t)
		if stalled {
			// The delegate works on until the parent has read everything.
			rt.WaitDrained(t)
		}
		fill := false
		after := 0
		for s, st := range k.FD2.Stalls {
			if st.At != schedule.StallAtAbort {
				continue
			}
			// The first line after the abort goes while the reader reads:
			// a catch-up of what the call kept (a room wait that timed out
			// under load) happens there, not into the stalled pipe.
			if k.Abort.After > 0 {
				rt.LogBytes(t, lvl, be.Name+"_backend.cpp", 230, message(c, c.Lines))
				after = 1
			}
			p.startStall(t, s)
			fill = true
		}
		for ; after < k.Abort.After; after++ {
			msg := message(c, c.Lines+after)
			if fill && !p.fitsWhole(lvl, be.Name+"_backend.cpp", 230, msg) {
				break // the stalled pipe is full: nothing is kept for the fatal path
			}
			rt.LogBytes(t, lvl, be.Name+"_backend.cpp", 230, msg)
		}
		if k.Abort.Fatal {
			msg := fmt.Sprintf("delegate state corrupt after %d lines", c.Lines+after)
			if fill {
				// As long as the call's lines: the full pipe cannot take it.
				msg += ": " + sim.Filler(0, max(1, min(c.Size, 255)-len(msg)-2))
			}
			rt.Log(t, sim.Fatal, be.Name+"_backend.cpp", 340, "%s", msg)
		}
		rt.Abort("the delegate called abort() (no fatal line)")
	}
	be.L.Release(t)
	if c.Nested != nil {
		// The native code calls back into Python (GIL held); the callback
		// makes a binding call and catches what it raises.
		nested := *c.Nested
		p.e.call(t, "execute (nested, from a callback)", func() *sim.NativeError {
			return p.body(t, -1, -1, nested, false, false)
		})
	}
	if c.Fails {
		return &sim.NativeError{Type: "RuntimeError", Msg: []byte("Execution failed: " + strings.Repeat("错", c.FailChars))}
	}
	return nil
}

// othersSettled is the barrier before an abort with several threads
// (docs/CONTRACT.md, "Fatal and abort with several threads"): the abort
// comes once every other thread waits for what only this process can give
// (the GIL, a lock) or has ended, so a write another thread has under way
// to a pipe the parent drains has finished (its flush's lines are out) and
// what the abort finds is the model's state, never the parent's pace.
func (p *sinkPlayer) othersSettled(t *sim.Thread) {
	if len(p.threads) < 2 {
		return
	}
	p.e.RT.G.WaitUntilAs(t, "every other thread waits or has ended before the abort", func() bool {
		for _, o := range p.threads[1:] {
			if !o.SettledLocked() {
				return false
			}
		}
		return true
	})
}

// fitsWhole reports whether the stalled pipe on fd 2 takes this line whole
// (the line as the logger formats it); a pipe whose fill cannot be read
// takes it.
func (p *sinkPlayer) fitsWhole(lvl sim.Level, file string, line int, msg []byte) bool {
	q, err := pipes.Queued(2)
	n := len(pytext.FormatLine(byte(lvl), 0, file, line, pytext.LogMessage(msg)))
	return err != nil || q+n <= p.s.FD2.Capacity
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
