// The SIGINT nemesis of a random schedule (schedule's sigint and stalls
// axes): the Ctrl-Cs the parent sends, at the moments the model's state
// names, and the eval loop's checks that raise them.
package programs

import (
	"fmt"
	"sync"

	"logjam/scenario/schedule"
	"logjam/sim"
	"logjam/telemetry"
)

func init() {
	playAxis("sigint", func(k *schedule.Sink) axisPlay {
		if k.Sigint != schedule.SigintLine {
			return nil // a blocked-write SIGINT is the stall's (stallsPlay)
		}
		return sigintPlay{}
	})
}

// sigintPlay sends the schedule's SIGINT after line SigintAt of the main
// thread's first call (schedule.SigintLine).
type sigintPlay struct{ noPlay }

func (sigintPlay) atLine(p *sinkPlayer, at callAt, n int) {
	if at.First && n == p.s.SigintAt {
		p.sigint(at.t)
	}
}

// pendingSIGINTs counts the observers that may still send a SIGINT on a
// blocked write: armed when the observer is made, done once it decided
// not to or its SIGINT reached the model. A stall that ended while one is
// in flight would race it: the reader reads again while the blocked-write
// SIGINT is on its way, and the verdict follows whether the write was
// interrupted first (LOST or MISROUTED; no test pins it).
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
