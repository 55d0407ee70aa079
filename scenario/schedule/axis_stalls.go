package schedule

import (
	"fmt"

	"logjam/scenario"
)

// Stalling is how the parent's reader of fd 2 stalls (fields of FD2 in
// the JSON): StallMs (pipe, pty), the reader starts stalled and reads
// again once StallMs have passed since a thread first blocked on fd 2 and
// only the reader can move (every other thread waits), or at once when
// the schedule's abort comes first (0: no stall); Stalls (pipe), stalls
// that start at marks of the run, reached in their order (several are a
// stall that repeats). A stall's end is a state of the run, never a time
// alone.
type Stalling struct {
	StallMs int     `json:"stall_ms,omitempty"`
	Stalls  []Stall `json:"stalls,omitempty"`
}

// The marks a stall starts at.
const (
	StallAtLine = "line" // before line Line of call Call of thread Thread (mid-call)
	StallAtExit = "exit" // as the script ends: after the joins, before main's lines outside a call, the daemons and the exit flush
	// StallAtAbort: in the aborting call, once the abort ended the other
	// stalls and fd 2 was drained, before the lines after it; those stop
	// before the first one the stalled pipe would not take whole, and the
	// Fatal message is as long as the call's lines: the fatal path meets a
	// full pipe with nothing kept.
	StallAtAbort = "abort"
)

// Stall is a stall of the parent's reader of fd 2 that starts at a mark:
// the thread at the mark waits until fd 2 is drained, the reader stops
// (acknowledged before the thread writes on), and it stays stopped until
// a writer waits for room on fd 2; it reads again once Ms have passed and
// only the reader can move (or at once when the schedule's abort comes
// first; a stall with a SIGINT reads again as I2 does, once the SIGINT's
// thread waits for room anew or nothing but the reader moves, whatever Ms
// says). So a stall starts at an exact byte and ends only once it was
// felt, whatever the machine's load.
type Stall struct {
	At     string `json:"at"`
	Thread int    `json:"thread,omitempty"`
	Call   int    `json:"call,omitempty"`
	Line   int    `json:"line,omitempty"`
	Ms     int    `json:"ms"`
	// Sigint: a real SIGINT when the main thread first blocks on fd 2
	// during this stall (not sent once the script is done, unless the
	// stall is the exit's).
	Sigint bool `json:"sigint,omitempty"`
	// Twice: a second SIGINT (a second Ctrl-C) once the first reached the
	// interpreter and the main thread waits for room anew, in a wait a
	// signal can end (needs Sigint).
	Twice bool `json:"twice,omitempty"`
	// SigintThread: the SIGINT lands on this thread's blocked write instead
	// of the main thread's (a stall at a line; the kernel delivered it
	// there, as macOS may); Python's handler still runs on the main thread.
	SigintThread int `json:"sigint_thread,omitempty"`
}

// stallsAxis is FD2.Stalling: the stalls of the parent's reader.
type stallsAxis struct{ noAxisPart }

func (stallsAxis) Name() string { return "stalls" }

// Draws: its draws, at their places in the draw order (DrawAt).
func (a stallsAxis) Draws() []DrawAt { return []DrawAt{{5, a.drawPlan}, {12, a.draw}} }

func (stallsAxis) Parts(k *Sink) []any { return []any{&k.FD2.Stalling} }

func (stallsAxis) Validate(k *Sink) error {
	f := k.FD2
	switch {
	case (f.Kind == FD2Pipe || f.Kind == FD2PTY) && (f.StallMs < 0 || f.StallMs > 2000):
		return fmt.Errorf("fd2 stall_ms %d (accepted: 0 to 2000)", f.StallMs)
	case len(f.Stalls) > 0 && f.Kind != FD2Pipe:
		return fmt.Errorf("fd2 stalls need fd2 kind pipe (a drained pipe is what a stall starts from)")
	case len(f.Stalls) > 3:
		return fmt.Errorf("fd2 %d stalls (accepted: up to 3)", len(f.Stalls))
	}
	sigints, exits, aborts := 0, 0, 0
	for i, st := range f.Stalls {
		if st.Ms < 1 || st.Ms > 2000 {
			return fmt.Errorf("fd2 stall %d ms %d (accepted: 1 to 2000)", i, st.Ms)
		}
		sigints += b2i(st.Sigint)
		if (st.Twice || st.SigintThread != 0) && !st.Sigint {
			return fmt.Errorf("fd2 stall %d: twice and sigint_thread need sigint", i)
		}
		if st.SigintThread < 0 || st.SigintThread >= len(k.Threads) || st.SigintThread > 0 && st.At != StallAtLine {
			return fmt.Errorf("fd2 stall %d sigint_thread %d (accepted: 0 to %d, another than 0 only at a line)", i, st.SigintThread, len(k.Threads)-1)
		}
		switch st.At {
		case StallAtExit, StallAtAbort:
			if st.At == StallAtExit {
				exits++
			} else {
				aborts++
				if k.Abort == nil {
					return fmt.Errorf("fd2 stall %d at the abort of a schedule with no abort", i)
				}
			}
			if st.Thread != 0 || st.Call != 0 || st.Line != 0 {
				return fmt.Errorf("fd2 stall %d at %s names no thread, call or line", i, st.At)
			}
		case StallAtLine:
			if st.Thread < 0 || st.Thread >= len(k.Threads) || st.Call < 0 || st.Call >= len(k.Threads[st.Thread].Calls) {
				return fmt.Errorf("fd2 stall %d: thread %d call %d does not exist", i, st.Thread, st.Call)
			}
			if n := k.Threads[st.Thread].Calls[st.Call].Lines; st.Line < 0 || st.Line > n {
				return fmt.Errorf("fd2 stall %d line %d (accepted: 0 to %d, the call's lines)", i, st.Line, n)
			}
		default:
			return fmt.Errorf("fd2 stall %d at %q (accepted: line, exit, abort)", i, st.At)
		}
	}
	switch {
	case sigints > 1:
		return fmt.Errorf("fd2 stalls: %d with a SIGINT (accepted: one)", sigints)
	case exits > 1 || aborts > 1:
		return fmt.Errorf("fd2 stalls: %d at exit, %d at the abort (accepted: one each)", exits, aborts)
	}
	return nil
}

// InContract: the contract's stalls last 200 or 400 ms once felt, and a
// SIGINT lands on another thread only where the kernel may put it there.
func (stallsAxis) InContract(s Schedule) error {
	k := s.Sink
	for i, st := range k.FD2.Stalls {
		if st.Ms != 200 && st.Ms != 400 {
			return outside("stall %d of %d ms (the contract's stalls last 200 or 400 ms once felt)", i, st.Ms)
		}
		if st.SigintThread > 0 && s.Platform != "macos" {
			return outside("stall %d: a SIGINT on thread %d on linux (the kernel gives a process-directed SIGINT to the main thread)", i, st.SigintThread)
		}
	}
	if k.FD2.Kind == FD2PTY || k.FD2.Kind == FD2Pipe {
		if k.FD2.StallMs != 0 && k.FD2.StallMs != 200 && k.FD2.StallMs != 400 {
			return outside("a stall of %d ms (the contract's stalls last 200 or 400 ms)", k.FD2.StallMs)
		}
	}
	return nil
}

// Arrange: the parent's reader starts stalled; a stall's SIGINT at a line
// reaches a caller (one of a stall at exit has none: its lines are
// judged, its Ctrl-C is not; docs/CONTRACT.md's edge).
func (stallsAxis) Arrange(k *Sink, c *scenario.Contract) {
	c.FD2Stalled = k.FD2.StallMs > 0
	for _, st := range k.FD2.Stalls {
		if st.Sigint && st.At == StallAtLine && k.hasCaller() {
			c.Interrupts = 1
			if st.Twice {
				c.Interrupts = 2
			}
		}
	}
}

func (stallsAxis) Faults(k *Sink) int {
	n := b2i(k.FD2.StallMs > 0)
	for _, st := range k.FD2.Stalls {
		n += 1 + b2i(st.Sigint) + b2i(st.Twice)
	}
	return n
}

func (stallsAxis) mostLines(*Sink) int { return 0 }

func (stallsAxis) capLines(k *Sink, m int) {
	for s := range k.FD2.Stalls {
		k.FD2.Stalls[s].Line = min(k.FD2.Stalls[s].Line, m)
	}
}

func (stallsAxis) Steps(s Schedule) []Step {
	steps := []Step{change(PhasePart, "no stall", func(c *Schedule) { c.Sink.FD2.StallMs = 0 })}
	for i, st := range s.Sink.FD2.Stalls {
		steps = append(steps, change(PhasePart, fmt.Sprintf("stall %d", i), func(c *Schedule) {
			c.Sink.FD2.Stalls = append(c.Sink.FD2.Stalls[:i:i], c.Sink.FD2.Stalls[i+1:]...)
		}))
		if st.Sigint {
			steps = append(steps, change(PhasePart, fmt.Sprintf("stall %d SIGINT", i), func(c *Schedule) {
				st := &c.Sink.FD2.Stalls[i]
				st.Sigint, st.Twice, st.SigintThread = false, false, 0
			}))
		}
		if st.Twice {
			steps = append(steps, change(PhasePart, fmt.Sprintf("stall %d second Ctrl-C", i), func(c *Schedule) { c.Sink.FD2.Stalls[i].Twice = false }))
		}
		if st.SigintThread > 0 {
			steps = append(steps, change(PhasePart, fmt.Sprintf("stall %d SIGINT on main", i), func(c *Schedule) { c.Sink.FD2.Stalls[i].SigintThread = 0 }))
		}
	}
	return steps
}

// keepStalls keeps the stalls keep reports true for (it may renumber
// their marks); nil when none is left, as a schedule without stalls has.
func keepStalls(stalls []Stall, keep func(st *Stall) bool) []Stall {
	var out []Stall
	for _, st := range stalls {
		if keep(&st) {
			out = append(out, st)
		}
	}
	return out
}

// stallSigint: a stall of the schedule sends a SIGINT.
func (k *Sink) stallSigint() bool {
	for _, st := range k.FD2.Stalls {
		if st.Sigint {
			return true
		}
	}
	return false
}

// StallAt reports whether a stall of the schedule starts at that mark.
func (k *Sink) StallAt(at string) bool {
	for _, st := range k.FD2.Stalls {
		if st.At == at {
			return true
		}
	}
	return false
}

// drawPlan, once fd 2's kind is drawn: a stall at a Fatal abort, alone,
// on a one-page pipe (the lines after the abort fill the stalled pipe, as
// many as it takes whole, so the Fatal line's write blocks, maybe under a
// SIGINT); else a timed stall, which ends StallMs after the first blocked
// write, once only the reader can move, and lasts well past the 100 ms
// room wait; and whether the reader stalls at marks (drawn by Draw, once
// the calls are). A stall is felt only once the lines after it fill the
// pipe, which a call of at most 160 lines of a few hundred bytes never
// does on 64 KiB: a pipe whose reader stalls is mostly one page
// (fd2Axis.drawSize), so that the stall, a stall that repeats, and the
// lines kept behind it are felt.
func (stallsAxis) drawPlan(d Drawer, s *Schedule, st *drawState) {
	f := &s.Sink.FD2
	st.abortStall = st.ending == "fatal" && f.Kind == FD2Pipe && d.IntRange(0, 2, "stall at the abort?") == 0
	if (f.Kind == FD2Pipe || f.Kind == FD2PTY) && !st.abortStall {
		f.StallMs = pick(d, []int{0, 200, 400}, "stall_ms")
	}
	st.marks = f.Kind == FD2Pipe && !st.abortStall && d.Bool("stalls at marks?")
}

// draw: the stall at the abort, or the stalls at marks, once the calls
// and the abort are drawn (a foreign abort after a stall needs a line
// once fd 2 has room again).
func (stallsAxis) draw(d Drawer, s *Schedule, st *drawState) {
	k := s.Sink
	foreignNoLine := k.Abort != nil && !k.Abort.Fatal && k.Abort.After < 1
	switch {
	case st.abortStall:
		k.Abort.After = 64
		k.FD2.Stalls = []Stall{{At: StallAtAbort, Ms: pick(d, []int{200, 400}, "stall ms"), Sigint: st.abortSigint}}
	case st.marks && !foreignNoLine:
		k.FD2.Stalls = drawStalls(d, st.sw, k, s.Platform)
	}
}

// drawStalls draws stalls of a pipe's reader that start at marks: one
// mid-call (any thread's call, before any of its lines) or at exit; maybe
// again later in the same call, in the latter half of the call's lines
// after the first (a stall that repeats: the catch-up after the first
// meets the second, once the lines between filled the pipe past the room
// the second finds); maybe one more at exit. A stall stays until
// a writer waits for room (a sink that never waits keeps it through the
// rest of the script). One of them may send the SIGINT when the main
// thread blocks (on macOS maybe another thread's write: the kernel may
// deliver it there), maybe twice, if the run has no other Ctrl-C source
// and no abort.
func drawStalls(d Drawer, sw swarm, k *Sink, platform string) []Stall {
	ms := func() int { return pick(d, []int{200, 400}, "stall ms") }
	var callers []int
	for i, th := range k.Threads {
		if len(th.Calls) > 0 {
			callers = append(callers, i)
		}
	}
	oneCtrlC := sw.sigint && k.Sigint == "" && k.Stderr.Kind != StderrInterrupt && k.Stderr.Kind != StderrSignalWait
	var stalls []Stall
	exitOK := k.Abort == nil
	if !exitOK || d.IntRange(0, 3, "first stall at exit?") > 0 {
		st := Stall{At: StallAtLine, Ms: ms()}
		st.Thread = pick(d, callers, "stall thread")
		st.Call = d.IntRange(0, len(k.Threads[st.Thread].Calls)-1, "stall call")
		lines := k.Threads[st.Thread].Calls[st.Call].Lines
		st.Line = d.IntRange(0, lines, "stall line")
		stalls = append(stalls, st)
		if d.IntRange(0, 2, "stall again?") > 0 {
			again := st
			again.Ms = ms()
			again.Line = d.IntRange(st.Line+(lines-st.Line)/2, lines, "stall again line")
			stalls = append(stalls, again)
		}
	}
	if exitOK && (len(stalls) == 0 || d.IntRange(0, 2, "stall at exit too?") == 0) {
		stalls = append(stalls, Stall{At: StallAtExit, Ms: ms()})
	}
	if oneCtrlC && k.Abort == nil && d.IntRange(0, 2, "stall sigint?") == 0 {
		st := &stalls[d.IntRange(0, len(stalls)-1, "stall sigint which")]
		st.Sigint = true
		st.Twice = d.IntRange(0, 2, "a second Ctrl-C?") == 0
		// macOS may deliver a process-directed SIGINT to any thread.
		if platform == "macos" && st.At == StallAtLine && len(k.Threads) > 1 && d.Bool("sigint on another thread?") {
			st.SigintThread = d.IntRange(1, len(k.Threads)-1, "sigint thread")
		}
	}
	return stalls
}
