package schedule

import (
	"fmt"
	"logjam/verdict"
	"slices"
	"strings"

	"logjam/failpoints"
)

// FD2Errors are write(2) calls on fd 2 that the kernel refuses with Errno
// (failpoints.FD2WriteErrno), counted over the run's write calls on fd 2,
// every thread's: the first After go through, then Times are refused (0:
// every one from there on). EAGAIN is "no room" (someone set O_NONBLOCK
// on fd 2): a bounded run of them, as a stall ends; the others are
// refusals for good of the bytes offered.
type FD2Errors struct {
	Errno string `json:"errno"`
	After int    `json:"after,omitempty"`
	Times int    `json:"times,omitempty"`
}

// The errnos an fd-2 write may be refused with.
const (
	ErrnoEPIPE  = "EPIPE"
	ErrnoEAGAIN = "EAGAIN"
	ErrnoENOSPC = "ENOSPC"
	ErrnoEIO    = "EIO"
)

// Errnos lists them (the failpoint's choices).
var Errnos = []string{ErrnoEPIPE, ErrnoEAGAIN, ErrnoENOSPC, ErrnoEIO}

// fd2ErrorsAxis is FD2.Errors.
type fd2ErrorsAxis struct{ noAxisPart }

func (fd2ErrorsAxis) Name() string { return "fd2-errors" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a fd2ErrorsAxis) Draws() []DrawAt { return []DrawAt{{16, a.draw}} }

func (fd2ErrorsAxis) Parts(k *Sink) []any { return []any{&k.FD2.Errors} }

func (fd2ErrorsAxis) FailureWords(s Schedule, v verdict.Verdict) []string {
	if e := s.Sink.FD2.Errors; e != nil && v != verdict.OK {
		return []string{"fd2 " + e.Errno}
	}
	return nil
}

func (fd2ErrorsAxis) Validate(k *Sink) error {
	e := k.FD2.Errors
	switch {
	case e == nil:
		return nil
	case !slices.Contains(Errnos, e.Errno):
		return fmt.Errorf("fd2 errors errno %q (accepted: %s)", e.Errno, strings.Join(Errnos, ", "))
	case e.After < 0 || e.After > 10000:
		return fmt.Errorf("fd2 errors after %d (accepted: 0 to 10000)", e.After)
	case e.Times < 0 || e.Times > 1000:
		return fmt.Errorf("fd2 errors times %d (accepted: 0 to 1000, 0 for every write from there on)", e.Times)
	case e.Errno == ErrnoEAGAIN && e.Times == 0:
		return fmt.Errorf("fd2 errors EAGAIN needs times > 0 (no room for ever is a reader that never reads: outside the contract)")
	}
	return nil
}

func (fd2ErrorsAxis) InContract(s Schedule) error {
	k := s.Sink
	e := k.FD2.Errors
	switch {
	case e == nil:
	case e.Errno == ErrnoEAGAIN && k.Abort != nil && !k.Abort.Fatal:
		return outside("a foreign abort with EAGAINs (a line kept for want of room dies with the process, as after a stall)")
	case e.Errno == ErrnoEAGAIN && k.StallAt(StallAtAbort):
		return outside("EAGAINs with a stall at the abort (a line kept for want of room meets a reader that reads again only once the Fatal line's write waits: it dies, as what cannot fit)")
	case e.Errno != ErrnoEAGAIN && k.FD2.Kind == FD2PTY:
		return outside("%s on a terminal (one whose reader falls behind takes part of a line; the rest refused leaves half a line the next one continues)", e.Errno)
	case e.Errno == ErrnoEAGAIN && e.Times > 100:
		return outside("%d EAGAINs in a row (no room that lasts is a stall; the contract's EAGAINs are a bounded run)", e.Times)
	}
	return nil
}

func (fd2ErrorsAxis) Faults(k *Sink) int { return b2i(k.FD2.Errors != nil) }

// Failpoints: the failpoint's terms (After off, then Times refusals).
func (fd2ErrorsAxis) Failpoints(k *Sink) failpoints.Set {
	e := k.FD2.Errors
	if e == nil {
		return nil
	}
	act := fmt.Sprintf("return(%q)", e.Errno)
	if e.Times > 0 {
		act = fmt.Sprintf("%d*%s", e.Times, act)
	}
	if e.After > 0 {
		act = fmt.Sprintf("%d*off->%s", e.After, act)
	}
	return failpoints.Set{{Name: failpoints.FD2WriteErrno, Terms: act}}
}

func (fd2ErrorsAxis) Steps(s Schedule) []Step {
	e := s.Sink.FD2.Errors
	if e == nil {
		return nil
	}
	steps := []Step{change(PhasePart, "no fd-2 errors", func(c *Schedule) { c.Sink.FD2.Errors = nil })}
	if e.Times != 1 {
		steps = append(steps, change(PhasePart, "fd-2 error once", func(c *Schedule) { c.Sink.FD2.Errors.Times = 1 }))
	}
	return append(steps, count(PhasePart, "fd-2 errors after", e.After, func(c *Schedule, n int) { c.Sink.FD2.Errors.After = n }))
}

// draw: write(2) calls on fd 2 the kernel refuses, when the swarm has
// them (none three times in four): an errno, the write calls that go
// through first (up to about the lines the schedule logs, so the
// refusals land anywhere in the run, at its end too), and how many are
// refused: once, a few, or every one from there on; EAGAIN (no room) only
// a bounded run of them.
func (fd2ErrorsAxis) draw(d Drawer, s *Schedule, st *drawState) {
	if !st.sw.fd2Errors || d.IntRange(0, 3, "fd2 errors?") > 0 {
		return
	}
	errnos := Errnos
	if a := s.Sink.Abort; a != nil && !a.Fatal || s.Sink.StallAt(StallAtAbort) {
		// A line kept for want of room dies with a foreign abort, as after
		// a stall, or meets a stall at the abort whose reader reads again
		// only once the Fatal line's write waits (the contract's edges).
		errnos = slices.DeleteFunc(slices.Clone(errnos), func(e string) bool { return e == ErrnoEAGAIN })
	}
	if s.Sink.FD2.Kind == FD2PTY {
		// A terminal takes part of a line once its reader falls behind
		// (stalled, or only slow: TestFD2ErrorsEdges); a refusal of the rest
		// leaves half a line that the next one continues (the edge).
		errnos = slices.DeleteFunc(slices.Clone(errnos), func(e string) bool { return e != ErrnoEAGAIN })
	}
	if len(errnos) == 0 {
		return
	}
	e := &FD2Errors{Errno: pick(d, errnos, "errno")}
	e.After = d.IntRange(0, min(s.Lines()+8, 400), "errors after")
	switch pick(d, []string{"once", "some", "from then on"}, "errors how many") {
	case "once":
		e.Times = 1
	case "some":
		e.Times = d.IntRange(2, 8, "errors times")
	default:
		if e.Errno == ErrnoEAGAIN {
			e.Times = d.IntRange(20, 100, "errors times")
		}
	}
	s.Sink.FD2.Errors = e
}
