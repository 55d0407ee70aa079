package schedule

import (
	"fmt"
	"slices"
	"time"

	"logjam/scenario"
)

// The fd-2 kinds.
const (
	FD2File      = "file"      // a temporary file
	FD2Pipe      = "pipe"      // a pipe the parent drains
	FD2PTY       = "pty"       // a pty the parent reads
	FD2IPyKernel = "ipykernel" // an in-child pipe drained by a forwarder that needs the GIL; sys.stderr its OutStream
	FD2Wurlitzer = "wurlitzer" // the same, sys.stderr left alone
)

// FD2 is what the child's fd 2 is; its stalls (Stalling) and its refused
// writes (Errors) are axes of their own.
type FD2 struct {
	Kind string `json:"kind"`
	// Capacity of the pipe in bytes (pipe, ipykernel, wurlitzer).
	Capacity int `json:"capacity,omitempty"`
	// Chunk is the forwarder's read size (ipykernel, wurlitzer).
	Chunk int `json:"chunk,omitempty"`
	Stalling
	// Errors: write(2) calls on fd 2 the kernel refuses (nil: none).
	Errors *FD2Errors `json:"errors,omitempty"`
}

// forwarded: fd 2 is a pipe a thread of the child drains.
func (f FD2) forwarded() bool { return f.Kind == FD2IPyKernel || f.Kind == FD2Wurlitzer }

// fd2Axis is FD2's kind, capacity and forwarder.
type fd2Axis struct{ noAxisPart }

func (fd2Axis) Name() string { return "fd2" }

// Draws: its draws, at their places in the draw order (DrawAt).
func (a fd2Axis) Draws() []DrawAt { return []DrawAt{{4, a.drawKind}, {6, a.drawSize}} }

// Parts: FD2 (its stalls and refused writes, parts of it, are the stalls
// and fd2-errors axes').
func (fd2Axis) Parts(k *Sink) []any { return []any{&k.FD2} }

// Words: fd 2's kind, then its stalls and refused writes (the stalls and
// fd2-errors axes' parts of FD2, read as one phrase with it).
func (fd2Axis) Words(s Schedule) []string {
	f := s.Sink.FD2
	var w string
	switch f.Kind {
	case FD2File:
		w = "fd 2 a file"
	case FD2Pipe:
		w = fmt.Sprintf("fd 2 a %d-byte pipe", f.Capacity)
	case FD2PTY:
		w = "fd 2 a pty"
	case FD2IPyKernel, FD2Wurlitzer:
		w = fmt.Sprintf("fd 2 %s's %d-byte pipe, read %d bytes at a time", f.Kind, f.Capacity, f.Chunk)
	default:
		w = "fd 2 " + f.Kind
	}
	if f.StallMs > 0 {
		w += fmt.Sprintf(", stalled %d ms", f.StallMs)
	}
	if n := len(f.Stalls); n > 0 {
		w += ", " + Plural(n, "stall")
		sig := 0
		for _, st := range f.Stalls {
			sig += b2i(st.Sigint)
		}
		if sig > 0 {
			w += fmt.Sprintf(" (%d with a SIGINT)", sig)
		}
	}
	if e := f.Errors; e != nil {
		times := "every write"
		if e.Times > 0 {
			times = Plural(e.Times, "write")
		}
		w += fmt.Sprintf(", %s refused with %s after %s", times, e.Errno, Plural(e.After, "write"))
	}
	return []string{w}
}

func (fd2Axis) Validate(k *Sink) error {
	f := k.FD2
	switch {
	case !slices.Contains([]string{FD2File, FD2Pipe, FD2PTY, FD2IPyKernel, FD2Wurlitzer}, f.Kind):
		return fmt.Errorf("fd2 kind %q (accepted: file, pipe, pty, ipykernel, wurlitzer)", f.Kind)
	case f.forwarded() && (f.Chunk < 1 || f.Chunk > 65536):
		return fmt.Errorf("fd2 chunk %d (accepted: 1 to 65536)", f.Chunk)
	case (f.Kind == FD2Pipe || f.forwarded()) && (f.Capacity < 4096 || f.Capacity > 65536 || f.Capacity&(f.Capacity-1) != 0):
		return fmt.Errorf("fd2 capacity %d (accepted: a power of two from 4096 to 65536)", f.Capacity)
	}
	return nil
}

func (fd2Axis) Arrange(k *Sink, c *scenario.Contract) {
	switch k.FD2.Kind {
	case FD2Pipe:
		c.FD2, c.PipeSize = scenario.FD2ParentPipe, k.FD2.Capacity
	case FD2PTY:
		c.FD2 = scenario.FD2PTY
	}
}

func (fd2Axis) Faults(k *Sink) int { return b2i(k.FD2.Kind != FD2File) }

// Slowness: a forwarder's reads of a few bytes each (forwarderReadMax a
// read).
func (fd2Axis) Slowness(s Schedule) time.Duration {
	if f := s.Sink.FD2; f.forwarded() && f.Chunk > 0 {
		return time.Duration(s.MessageBytes()/f.Chunk) * forwarderReadMax
	}
	return 0
}

// forwarderReadMax bounds one forwarder read with its turn for the GIL:
// about 25 us measured on two loaded cores, four times that for a machine
// running four children at a time under load. Without it, a forwarder
// reading a byte at a time met a 10 s deadline before its cycle formed at
// load 37 with four children at a time: HANG without a cycle instead of
// the cycle.
const forwarderReadMax = 100 * time.Microsecond

func (fd2Axis) Steps(s Schedule) []Step {
	var steps []Step
	if f := s.Sink.FD2; f.Chunk > 0 && f.Chunk < f.Capacity {
		// One byte a read is a schedule's slowest part by far: read all
		// the pipe holds, unless the failure needs the small reads.
		steps = append(steps, change(PhaseCheap, "the forwarder reads the whole pipe", func(c *Schedule) { c.Sink.FD2.Chunk = c.Sink.FD2.Capacity }))
	}
	return append(steps, change(PhasePart, "fd 2 a file", func(c *Schedule) {
		c.Sink.FD2 = FD2{Kind: FD2File, Errors: c.Sink.FD2.Errors}
	}))
}

// drawKind: fd 2's kind, once the ending is drawn: at an abort, fd 2
// drained by no GIL waiter.
func (fd2Axis) drawKind(d Drawer, s *Schedule, st *drawState) {
	kinds := []string{FD2File, FD2Pipe, FD2Wurlitzer, FD2IPyKernel, FD2PTY}
	if st.ending != "done" {
		kinds = []string{FD2File, FD2Pipe, FD2PTY}
	}
	s.Sink.FD2.Kind = pick(d, kinds, "fd2")
}

// drawSize: a pipe's capacity and a forwarder's read size, once the
// stalls' plan is drawn: a pipe whose reader stalls is mostly one page
// (stallsAxis.drawPlan).
func (fd2Axis) drawSize(d Drawer, s *Schedule, st *drawState) {
	f := &s.Sink.FD2
	switch {
	case st.abortStall:
		f.Capacity = 4096
	case f.Kind == FD2Pipe && (st.marks || f.StallMs > 0):
		f.Capacity = pick(d, []int{4096, 4096, 4096, 8192, 65536}, "capacity")
	case f.Kind == FD2Pipe || f.Kind == FD2IPyKernel || f.Kind == FD2Wurlitzer:
		f.Capacity = pick(d, []int{4096, 8192, 16384, 65536}, "capacity")
	}
	if f.Kind == FD2IPyKernel || f.Kind == FD2Wurlitzer {
		f.Chunk = pick(d, []int{1000, 1024, 1, 512, 4096, 65536}, "chunk")
	}
}
