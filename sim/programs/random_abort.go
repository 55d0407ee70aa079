// The abort of a random schedule (schedule's abort axis): the main thread's
// last call ends the run, once the stalls it meets are ended and every
// other thread has settled.
package programs

import (
	"fmt"

	"logjam/internal/pytext"
	"logjam/pipes"
	"logjam/scenario/schedule"
	"logjam/sim"
)

func init() {
	playAxis("abort", func(k *schedule.Sink) axisPlay {
		if k.Abort == nil {
			return nil
		}
		return abortPlay{}
	})
}

// abortPlay ends the main thread's last call (schedule.Abort): the stalls
// end there if no blocked write ended them, the delegate works on until
// the parent has read everything, the stall at the abort starts, the call
// logs After more lines, then a Fatal line or abort() itself.
type abortPlay struct{ noPlay }

func (abortPlay) callEnds(p *sinkPlayer, at callAt) {
	if !at.Last {
		return
	}
	e, k, rt, t, c := p.e, p.s, p.e.RT, at.t, at.c
	lvl, file := sim.Level(c.Level[0]), at.be.Name+"_backend.cpp"
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
			rt.LogBytes(t, lvl, file, 230, message(c, c.Lines))
			after = 1
		}
		p.startStall(t, s)
		fill = true
	}
	for ; after < k.Abort.After; after++ {
		msg := message(c, c.Lines+after)
		if fill && !p.fitsWhole(lvl, file, 230, msg) {
			break // the stalled pipe is full: nothing is kept for the fatal path
		}
		rt.LogBytes(t, lvl, file, 230, msg)
	}
	if k.Abort.Fatal {
		msg := fmt.Sprintf("delegate state corrupt after %d lines", c.Lines+after)
		if fill {
			// As long as the call's lines: the full pipe cannot take it.
			msg += ": " + sim.Filler(0, max(1, min(c.Size, 255)-len(msg)-2))
		}
		rt.Log(t, sim.Fatal, file, 340, "%s", msg)
	}
	rt.Abort("the delegate called abort() (no fatal line)")
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
