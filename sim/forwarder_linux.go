package sim

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"logjam/pipes"
	"logjam/telemetry"
)

// CaptureFD2 does what ipykernel and wurlitzer do: a new pipe (one page)
// is put on fd 2 with dup2, a copy of the old fd 2 is kept, and a daemon
// forwarder thread drains the pipe into sink (a Python stream: the
// OutStream, or wurlitzer's sink) and the saved fd. The forwarder is named
// as the drainer of fd 2's room, so "a GIL holder waits for room on fd 2
// while the forwarder waits for the GIL" is a cycle the moment it forms.
func (rt *Runtime) CaptureFD2(style ForwarderStyle, sink Stream) (*FD2Capture, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	w := os.NewFile(uintptr(p[1]), "capture pipe")
	size := style.Capacity
	if size == 0 {
		size = CapturePipeSize
	}
	if _, err := pipes.SetCapacity(w, size); err != nil {
		unix.Close(p[0])
		w.Close()
		return nil, err
	}
	saved, err := unix.FcntlInt(2, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		unix.Close(p[0])
		w.Close()
		return nil, os.NewSyscallError("fcntl F_DUPFD_CLOEXEC", err)
	}
	// dup3 with no flags: fd 2 stays open across exec, as after dup2.
	if err := unix.Dup3(p[1], 2, 0); err != nil {
		unix.Close(p[0])
		unix.Close(saved)
		w.Close()
		return nil, os.NewSyscallError("dup2", err)
	}
	w.Close()
	if err := rt.FD2.Rearranged(); err != nil {
		return nil, fmt.Errorf("fd 2 after dup2: %w", err)
	}
	c := &FD2Capture{rt: rt, style: style, sink: sink, read: p[0], saved: saved}
	if m, ok := sink.(*MemStream); ok && style.Name == IPyKernel.Name {
		m.SetOriginalStdstreamCopy(saved) // the OutStream's _original_stdstream_copy
	}
	c.F = rt.In.StartNative(style.Name+" forwarder", true, c.forward)
	rt.FD2.SetDrainer(c.F)
	rt.Tel.Emit(telemetry.CaptureFD2{Style: style.Name, Chunk: style.Chunk, Pipe: size, Forwarder: c.F.Name})
	return c, nil
}

// Close ends the capture as ipykernel's and wurlitzer's exit paths do: the
// old fd 2 is put back (closing the pipe's last write end), and t waits,
// without the GIL, for the forwarder to drain the pipe to EOF and end.
func (c *FD2Capture) Close(t *Thread) error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.rt.G.mu.Lock()
	c.closing = true
	c.rt.G.changedLocked()
	c.rt.G.mu.Unlock()
	if err := unix.Dup3(c.saved, 2, 0); err != nil {
		return os.NewSyscallError("dup2", err)
	}
	if err := c.rt.FD2.Rearranged(); err != nil {
		return err
	}
	c.rt.FD2.SetDrainer(nil)
	t.Join(c.F)
	unix.Close(c.read)
	unix.Close(c.saved)
	return nil
}

// readChunk is os.read: blocking, retried on EINTR; ok is false at EOF or
// on an error.
func readChunk(fd int, buf []byte) (int, bool) {
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err == nil && n > 0
	}
}

func writeAll(fd int, b []byte) {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if n > 0 {
			b = b[n:]
		}
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			return
		}
	}
}

// awaitRead is a barrier before each read: the forwarder reads when every
// other thread of the process waits for something only the process can end
// (the GIL, a lock, room on fd 2, a join) and the pipe holds bytes, or once
// the capture is closing. A wait that is over but whose thread is not yet
// awake (a join of a thread that has ended, a set event) does not count,
// nor one the parent ends (a SIGINT it sends, room on a pipe it drains):
// whether the forwarder read in that moment would be the scheduler's
// (random search: merged on a wurlitzer pipe, the main thread joining a
// thread that had just ended, HANG or OK).
// A real forwarder reads whenever bytes arrive, so how much one read got,
// and so whether a GIL holder later found the pipe full, depended on when
// the forwarder was scheduled (random search: fd2 on a wurlitzer pipe came
// out HANG or BADESC). At a point where nobody else can move, the pipe's
// contents are the model's state, and so is what the read takes.
func (c *FD2Capture) awaitRead() {
	g := c.rt.G
	g.WaitUntil(func() bool {
		if c.closing {
			return true
		}
		for _, o := range g.threads {
			if o != c.F && !o.native && !o.ended && !o.blockedLocked() {
				return false
			}
		}
		n, err := pipes.Queued(c.read)
		return err != nil || n > 0
	})
}
