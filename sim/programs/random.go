package programs

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"logjam/internal/pytext"
	"logjam/pipes"
	"logjam/scenario/schedule"
	"logjam/sim"
	"logjam/sim/lazyinit"
	"logjam/telemetry"
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
		return playLazy(e, s.Policy, s.Lazy)
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
	// began (sendResume). Two timed stalls felt by one write each sent
	// one, and the later, sent after a new stall had begun, ended that
	// stall at once (random search: adaptive, seed 4049447, LOST or OK;
	// docs/TRUST.md).
	resumeMu sync.Mutex
	resumes  int
}

// resumesNow is the count of resume marks sent so far.
func (p *sinkPlayer) resumesNow() int {
	p.resumeMu.Lock()
	defer p.resumeMu.Unlock()
	return p.resumes
}

// sendResume has the parent's reader read again, unless a resume came
// after since (the stop this observer ends is over already).
func (p *sinkPlayer) sendResume(since int) {
	p.resumeMu.Lock()
	defer p.resumeMu.Unlock()
	if p.resumes == since {
		p.resumeLocked()
	}
}

// resumeLocked sends the resume mark and counts it (resumeMu held).
func (p *sinkPlayer) resumeLocked() {
	p.resumes++
	p.e.RT.Tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Resume})
}

// pendingSIGINTs counts the observers that may still send a SIGINT on a
// blocked write: armed when the observer is made, done once it decided
// not to or its SIGINT reached the model. A stall that ends while one is
// in flight races it (random search: merged, seed 41205, the reader read
// again while the blocked-write SIGINT was on its way: LOST or MISROUTED
// as the write was interrupted or not).
// The model's fd 2 is told too (FD2.SIGINTDue): its held reader does not
// read meanwhile.
type pendingSIGINTs struct {
	fd2  *sim.FD2
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

func (q *pendingSIGINTs) arm() {
	q.fd2.SIGINTDue()
	q.mu.Lock()
	if q.cond == nil {
		q.cond = sync.NewCond(&q.mu)
	}
	q.n++
	q.mu.Unlock()
}

func (q *pendingSIGINTs) done() {
	q.mu.Lock()
	q.n--
	q.cond.Broadcast()
	q.mu.Unlock()
	q.fd2.SIGINTSettled()
}

// wait returns once no armed observer is undecided.
func (q *pendingSIGINTs) wait() {
	q.mu.Lock()
	for q.n > 0 {
		q.cond.Wait()
	}
	q.mu.Unlock()
}

func (p *sinkPlayer) play() *sim.PyErr {
	e, k := p.e, p.s
	rt, in, main := e.RT, e.RT.In, e.Main
	p.sigints.fd2 = rt.FD2
	p.installHandler()
	var capture *sim.FD2Capture
	if k.FD2.Kind == schedule.FD2IPyKernel || k.FD2.Kind == schedule.FD2Wurlitzer {
		style := sim.IPyKernel
		if k.FD2.Kind == schedule.FD2Wurlitzer {
			style = sim.Wurlitzer
		}
		style.Chunk, style.Capacity = k.FD2.Chunk, k.FD2.Capacity
		capture = captureFD2(e, style)
	}
	switch k.Stderr.Kind {
	case schedule.StderrOriginal:
	case schedule.StderrSignalWait:
		in.Signals.Install(sim.HandlerCounting)
		in.SetStderr(in.NewSignalWaitStream("StringIO"))
		go func() {
			// The SIGINT that ends the wait for all of them, asked once
			// nothing else can move (the first thread that waits in the
			// stream's write is named as the one that got it).
			t := rt.G.WaitUntilOnlyASignalMoves()
			rt.Tel.Emit(telemetry.Observed{Thread: t.Name, Waits: "a SIGINT", Then: "SIGINT"})
			askSIGINT(e)
		}()
	default: // the faults are the schedule's GO_FAILPOINTS
		in.SetStderr(sim.NewMemStream("StringIO"))
	}
	if k.FD2.StallMs > 0 {
		// The reader started stalled; the first thread that blocks on fd 2
		// felt the stall, which ends StallMs later once nothing but the
		// reader can move (resumeOnceSettled), unless the abort ended it
		// first.
		mayInterrupt := k.Sigint == schedule.SigintBlocked
		if mayInterrupt {
			p.sigints.arm()
		}
		go func() {
			t := rt.G.WaitUntilAnyWaits(rt.FD2.Room())
			if !p.stallEnded.CompareAndSwap(false, true) {
				if mayInterrupt {
					p.sigints.done()
				}
				return
			}
			sigint := mayInterrupt && t == main && !p.scriptDone.Load()
			rt.Tel.Emit(telemetry.Observed{Thread: t.Name, Waits: "room on fd 2", Then: fmt.Sprintf("SIGINT: %v; read again once %d ms have passed and only the reader can move", sigint, k.FD2.StallMs)})
			if sigint {
				p.untilOnlyTheParentMoves()
				var at sim.WaitState
				rt.G.WaitUntil(func() bool { at = t.WaitStateLocked(); return true })
				sig := rt.In.Signals
				seen := sig.Trips()
				askSIGINT(e)
				if sig.Kind() != sim.HandlerNone {
					// The SIGINT reached the model and, when it can, ended
					// the blocked write (EINTR), before any stall may end.
					sig.AwaitTrips(seen + 1)
					if at.Interruptible {
						rt.G.WaitUntil(func() bool { return t.WaitStateLocked() != at })
					}
				}
			}
			if mayInterrupt {
				p.sigints.done()
			}
			p.resumeOnceSettled(t, "the stall", k.FD2.StallMs, 0)
		}()
	}

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
	p.outside(main, k.Outside, k.OutsideText)
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

// startStall starts stall s of the schedule at its mark: t waits until the
// parent has read everything written to fd 2, asks for the stall and writes
// on only once the parent acknowledged it, so the stall starts at this byte
// whatever the load. An observer ends it once a writer waits for room on
// fd 2 (resumeOnceSettled), sending the stall's SIGINT if the main thread
// is that writer.
func (p *sinkPlayer) startStall(t *sim.Thread, s int) {
	rt, st := p.e.RT, p.s.FD2.Stalls[s]
	// A write another thread dropped the GIL for lands first: drained
	// before it, the pipe took its bytes after the reader stopped or
	// before, as the scheduler went (random search: pystderr, determinism
	// seed 108622, an abort's stall beside T1's lines: LOST or OK;
	// docs/TRUST.md, "A stall's first byte").
	rt.FD2.AwaitInFlight(t)
	rt.WaitDrained(t)
	rt.Tel.Emit(telemetry.Observed{Thread: t.Name, Waits: "fd 2 drained", Then: fmt.Sprintf("stall %d (at %s): the reader stops", s, st.At)})
	since := p.resumesNow()
	rt.FD2.AskStall()
	p.live[s].Store(true)
	if st.Sigint {
		p.sigints.arm()
	}
	go func() {
		w := rt.G.WaitUntilAnyWaits(rt.FD2.Room())
		if !p.live[s].CompareAndSwap(true, false) {
			if st.Sigint {
				p.sigints.done()
			}
			return // the abort ended it
		}
		target := p.threads[st.SigintThread]
		sigint := st.Sigint && w == target && (st.At != schedule.StallAtLine || !p.scriptDone.Load())
		if !sigint {
			rt.Tel.Emit(telemetry.Observed{Thread: w.Name, Waits: "room on fd 2", Then: fmt.Sprintf("stall %d: read again once %d ms have passed and only the reader can move", s, st.Ms)})
			if st.Sigint {
				p.sigints.done()
			}
			p.resumeOnceSettled(w, fmt.Sprintf("stall %d", s), st.Ms, since)
			return
		}
		rt.Tel.Emit(telemetry.Observed{Thread: w.Name, Waits: "room on fd 2", Then: fmt.Sprintf("stall %d: SIGINT on %s's write", s, target.Name)})
		p.sigintThenResume(target, st.Twice, since)
		p.sigints.done()
	}()
}

// resumeOnceSettled ends a timed stall of fd 2 that t felt: the parent's
// reader reads again (MarkFD2Resume) once ms have passed and nothing in
// the model moves before it reads (WaitUntilOnlyTheParentMoves) and no
// SIGINT on a blocked write is undecided or on its way (pendingSIGINTs).
// After the time alone, how far the other threads had got was the
// machine's load (random search: merged, seeds 41205 and 41471 beside two
// busy loops, docs/TRUST.md); the time is a lower bound that decides
// nothing.
func (p *sinkPlayer) resumeOnceSettled(t *sim.Thread, what string, ms, since int) {
	rt := p.e.RT
	time.Sleep(time.Duration(ms) * time.Millisecond)
	p.sigints.wait()
	rt.G.WaitUntilOnlyTheParentMoves(p.s.Stderr.Kind == schedule.StderrSignalWait)
	rt.Tel.Emit(telemetry.Observed{Thread: t.Name, Waits: fmt.Sprintf("%s: %d ms passed and only the reader can move", what, ms), Then: "resume fd 2"})
	p.sendResume(since)
}

// untilOnlyTheParentMoves is the barrier before a SIGINT on a blocked
// write: nothing in the model moves before it arrives
// (Graph.WaitUntilOnlyTheParentMoves), so what the other threads did
// meanwhile is the model's state, not the parent's pace (random search:
// merged, nightly seed 111274240: the SIGINT asked as soon as the main
// thread's flush blocked ended it before or after another thread's lines
// and the held reader's read, LOST or DOUBLEINT).
func (p *sinkPlayer) untilOnlyTheParentMoves() {
	p.e.RT.G.WaitUntilOnlyTheParentMoves(p.s.Stderr.Kind == schedule.StderrSignalWait)
}

// sigintThenResume sends the stall's SIGINT on target's blocked
// write (and, with twice, a second one, as I7 does, once the first reached
// the model and the target waits for room anew in a wait a signal can
// end) and has the parent read again as I2 does: once the last SIGINT
// reached the model and the target waits for room anew (or in a wait
// a signal cannot end), or has left its wait and nothing but the reader
// moves (a write that gave up may never wait again). A SIGINT the process
// ignores ends no wait: the reader reads again at once. The stall's ms
// plays no part: the model's state decides (waitAnew).
func (p *sinkPlayer) sigintThenResume(target *sim.Thread, twice bool, since int) {
	e, rt, sig := p.e, p.e.RT, p.e.RT.In.Signals
	p.untilOnlyTheParentMoves()
	var at sim.WaitState
	rt.G.WaitUntil(func() bool { at = target.WaitStateLocked(); return true })
	why := ""
	for i := 1; i <= 2; i++ {
		if i > 1 {
			p.untilOnlyTheParentMoves()
		}
		seen := sig.Trips()
		rt.Tel.Emit(telemetry.Observed{Thread: target.Name, Waits: "room on fd 2", Then: fmt.Sprintf("SIGINT %d", i)})
		askSIGINT(e)
		if sig.Kind() == sim.HandlerNone {
			why = fmt.Sprintf("SIGINT %d is ignored: it ends no wait", i)
			break
		}
		sig.AwaitTrips(seen + 1)
		var anew bool
		if at, anew = p.waitAnew(target, at); !anew {
			why = fmt.Sprintf("%s left its wait after SIGINT %d and only the reader can move", target.Name, i)
			break
		}
		why = fmt.Sprintf("%s waits for room anew, after SIGINT %d", target.Name, i)
		if !twice || !at.Interruptible {
			break
		}
	}
	rt.Tel.Emit(telemetry.Observed{Thread: target.Name, Waits: why, Then: "resume fd 2"})
	p.sendResume(since)
}

// waitAnew waits until t waits for room on fd 2 anew (waitsAnewLocked)
// and returns that wait, or until t has left the wait at and nothing but
// the parent's reader moves (anew false: it will not wait again before the
// reader reads). It waited at most the stall's ms: on a loaded machine a
// target still on its way to its new wait got no second SIGINT (I7 as a
// schedule, adaptive: DOUBLEINT once in 20 loaded repeats; docs/TRUST.md).
func (p *sinkPlayer) waitAnew(t *sim.Thread, at sim.WaitState) (now sim.WaitState, anew bool) {
	rt := p.e.RT
	room := rt.FD2.Room()
	signalWaits := p.s.Stderr.Kind == schedule.StderrSignalWait
	rt.G.WaitUntil(func() bool {
		now, anew = waitsAnewLocked(t, room, at)
		return anew || now != at && rt.G.OnlyTheReaderMovesLocked(signalWaits) // left the wait at
	})
	return now, anew
}

// fitsWhole reports whether the stalled pipe on fd 2 takes this line whole
// (the line as the logger formats it); a pipe whose fill cannot be read
// takes it.
func (p *sinkPlayer) fitsWhole(lvl sim.Level, file string, line int, msg []byte) bool {
	q, err := pipes.Queued(2)
	n := len(pytext.FormatLine(byte(lvl), 0, file, line, pytext.LogMessage(msg)))
	return err != nil || q+n <= p.s.FD2.Capacity
}

// evalCheck is the eval loop between two statements: the main thread runs
// a pending SIGINT's handler, and the script catches the KeyboardInterrupt.
func (p *sinkPlayer) evalCheck(t *sim.Thread, where string) {
	if exc := p.e.RT.In.Signals.Check(t); exc != nil {
		p.e.RT.Tel.Emit(telemetry.Exception{Thread: t.Name, Call: "the eval loop " + where, Type: exc.Type, Text: exc.Msg})
		p.e.RT.In.Print(fmt.Sprintf("%s: caught %s (%s)", t.Name, exc.Type, where))
	}
}

// sigint asks the parent for a real SIGINT and, as I1 does, works on
// until the interpreter has seen it; a child that started with SIGINT
// ignored never sees it and does not wait.
func (p *sinkPlayer) sigint(t *sim.Thread) {
	sig := p.e.RT.In.Signals
	if sig.Kind() == sim.HandlerNone {
		askSIGINT(p.e)
		return
	}
	seen := sig.Trips()
	askSIGINT(p.e)
	sig.WaitTrips(t, seen+1)
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
