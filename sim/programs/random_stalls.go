// The stalls nemesis of a random schedule (schedule's stalls axis): the
// parent's reader of fd 2 stopped at the start or at marks of the run, and
// read again once the model's state says so, never a time alone.
package programs

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"logjam/scenario/schedule"
	"logjam/sim"
	"logjam/telemetry"
)

func init() {
	playAxis("stalls", func(k *schedule.Sink) axisPlay {
		if k.FD2.StallMs == 0 && len(k.FD2.Stalls) == 0 {
			return nil
		}
		return stallsPlay{}
	})
}

// nemesis is the state of the stalls, their SIGINTs and the resumes that
// end them, shared by the stalls' observers and the abort that ends them.
type nemesis struct {
	// stallEnded: the stall of fd 2 has been ended (by a blocked write or
	// the abort), once.
	stallEnded atomic.Bool
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

// stallsPlay is the stalls axis's half: the stall at the start (before
// the threads), each stall's SIGINT thread told once the threads are
// made, the stalls at a call's line and the stalls at exit (once every
// thread is joined).
type stallsPlay struct{ noPlay }

func (stallsPlay) beforeThreads(p *sinkPlayer) {
	p.sigints.fd2 = p.e.RT.FD2
	p.startInitialStall()
	if n := len(p.s.FD2.Stalls); n > 0 {
		p.live = make([]atomic.Bool, n)
	}
}

// threadsStarted: a stall's SIGINT lands on its thread's blocked write.
func (stallsPlay) threadsStarted(p *sinkPlayer) {
	for _, st := range p.s.FD2.Stalls {
		if st.SigintThread > 0 {
			p.e.RT.FD2.DeliverSIGINTTo(p.threads[st.SigintThread])
		}
	}
}

func (stallsPlay) atLine(p *sinkPlayer, at callAt, n int) {
	for s, st := range p.s.FD2.Stalls {
		if st.At == schedule.StallAtLine && st.Thread == at.Thread && st.Call == at.Call && st.Line == n {
			p.startStall(at.t, s)
		}
	}
}

func (stallsPlay) joined(p *sinkPlayer) {
	for i, st := range p.s.FD2.Stalls {
		if st.At == schedule.StallAtExit {
			p.startStall(p.e.Main, i)
		}
	}
}

// startInitialStall is the stall at the start (FD2.StallMs): the reader
// started stalled; the first thread that blocks on fd 2 felt the stall,
// which ends StallMs later once nothing but the reader can move
// (resumeOnceSettled), unless the abort ended it first.
func (p *sinkPlayer) startInitialStall() {
	e, k := p.e, p.s
	rt, main := e.RT, e.Main
	if k.FD2.StallMs > 0 {
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

// startStall starts stall s of the schedule at its mark: t waits until the
// parent has read everything written to fd 2, asks for the stall and writes
// on only once the parent acknowledged it, so the stall starts at this byte
// whatever the load. An observer ends it once a writer waits for room on
// fd 2 (resumeOnceSettled), sending the stall's SIGINT if the main thread
// is that writer.
func (p *sinkPlayer) startStall(t *sim.Thread, s int) {
	rt, st := p.e.RT, p.s.FD2.Stalls[s]
	// A write another thread dropped the GIL for lands first: drained
	// before it, the pipe would take its bytes after the reader stopped or
	// before, as the scheduler went (docs/TRUST.md, "A stall's first byte";
	// pinned by suites/random's entry "seed 108622: pystderr OK (a stall
	// starts after the writes in flight)").
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
// machine's load (docs/TRUST.md, "Determinism"; measured by
// TestEveryRunReplaysAlike beside busy loops); the time is a lower bound
// that decides nothing.
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
// meanwhile is the model's state, not the parent's pace: a SIGINT asked as
// soon as the main thread's flush blocked would end it before or after
// another thread's lines and the held reader's read (LOST or DOUBLEINT; no
// test pins it).
func (p *sinkPlayer) untilOnlyTheParentMoves() {
	p.e.RT.G.WaitUntilOnlyTheParentMoves(p.s.Stderr.Kind == schedule.StderrSignalWait)
}
