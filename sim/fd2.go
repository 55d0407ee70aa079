package sim

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"logjam/pipes"
	"logjam/telemetry"
)

// FDKind is what fd 2 is.
type FDKind string

// The fd-2 kinds.
const (
	FDFile  FDKind = "file"
	FDPipe  FDKind = "pipe"
	FDTTY   FDKind = "tty"
	FDOther FDKind = "other"
)

// FD2 is the process's real fd 2. Writes are real write(2) calls. To know
// when a write is blocked for lack of room (and not merely slow), a second
// open file description of the same pipe or tty, non-blocking, is tried
// first: EAGAIN is the kernel's own "no room", and only then is the wait
// for room an edge of the wait-for graph, owned by whoever drains fd 2.
//
// What it is made of, a file each: the room on fd 2 and the writers' turns
// at it (PipeRoom, fd2_room.go), the parent's reader asked by marks
// (parentReader, fd2_ask.go), the hold of that reader (readerHold,
// fd2_hold.go), a terminal's write lock (ttyLock, fd2_ttylock.go), the
// signal's wake-up pipe (wakePipe, fd2_wake.go), and how a write waits for
// room (roomWait, fd2_wait.go), chosen when fd 2 is arranged (arrangeLocked).
type FD2 struct {
	Kind  FDKind
	probe int // non-blocking description of fd 2, or -1
	// pipeCap: fd 2's pipe capacity (0: not a pipe, or unknown)
	pipeCap int
	room    *PipeRoom
	wake    wakePipe // written when a signal arrives, so a blocked
	// Python write can run the handlers (the EINTR path)
	reader *parentReader
	hold   *readerHold
	tty    *ttyLock
	// wait: how a write call waits for room (arrange); graph mutex.
	wait roomWait
	g    *Graph
	tel  *telemetry.Writer

	blksize int // st_blksize of fd 2 when it was opened: sys.stderr's buffer size

	nowaitRefused bool // the kernel refused RWF_NOWAIT on fd 2's pipe (before Linux 5.8)

	noRoom int // room checks that found no room; guarded by the graph's mutex

	// sigintTo is the thread whose blocked write(2) a SIGINT interrupts
	// (nil: the main thread, where Linux delivers a process-directed
	// signal; macOS may pick any thread); guarded by the graph's mutex.
	sigintTo *Thread
}

// openFD2 opens the model of fd 2; readerAcks: the parent's reader answers
// the child's marks (Options.ReaderAcks).
func openFD2(g *Graph, tel *telemetry.Writer, readerAcks bool) (*FD2, error) {
	f := &FD2{probe: -1, g: g, tel: tel, wake: noWakePipe}
	var st unix.Stat_t
	if err := unix.Fstat(2, &st); err != nil {
		return nil, fmt.Errorf("fd 2 is not open: %w", err)
	}
	f.blksize = int(st.Blksize)
	if f.blksize <= 0 {
		f.blksize = 8192 // io.DEFAULT_BUFFER_SIZE
	}
	f.Kind = fd2Kind(&st)
	// A blocking fd 2, whatever the parent's end was.
	_ = unix.SetNonblock(2, false)
	f.openProbe(f.Kind)
	f.room = &PipeRoom{kind: f.Kind, g: g, wake: &f.wake}
	if p, err := newWakePipe(); err == nil {
		f.wake = p
	}
	f.reader = &parentReader{acks: readerAcks, tel: tel}
	f.hold = &readerHold{g: g, room: f.room, reader: f.reader, tel: tel}
	f.room.hold = f.hold
	f.tty = &ttyLock{g: g, room: f.room}
	g.mu.Lock()
	f.arrangeLocked()
	g.mu.Unlock()
	return f, nil
}

// fd2Kind is what the fd 2 st describes is.
func fd2Kind(st *unix.Stat_t) FDKind {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return FDPipe
	case unix.S_IFREG:
		return FDFile
	case unix.S_IFCHR:
		if isTTY(2) {
			return FDTTY
		}
	}
	return FDOther
}

// openProbe opens the non-blocking twin of fd 2 (a pipe or a terminal)
// and notes a pipe's capacity (F_GETPIPE_SZ, unheldRoom's bound): once per
// fd 2, not per write.
func (f *FD2) openProbe(kind FDKind) {
	f.probe, f.pipeCap = -1, 0
	if kind != FDPipe && kind != FDTTY {
		return
	}
	if fd, err := unix.Open("/proc/self/fd/2", unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
		f.probe = fd
	}
	if kind == FDPipe {
		if c, err := pipes.Capacity(os.Stderr); err == nil {
			f.pipeCap = c
		}
	}
}

// arrangeLocked chooses how a write call waits for room on fd 2 as it is
// now: for the in-process drainer's read, for the held parent's reader on
// a pipe whose reader answers the child's marks, or for the kernel. fd 2
// is arranged (opened, Rearranged, SetDrainer) while no thread writes to
// it, so one choice serves every write until the next. Graph mutex held.
func (f *FD2) arrangeLocked() {
	switch {
	case f.room.drainer != nil:
		f.wait = drainerWait{room: f.room}
	case f.Kind == FDPipe && f.reader.answers():
		f.wait = f.hold
	default:
		f.wait = kernelWait{f: f}
	}
}

// arranged is how a write call waits for room on fd 2 (arrangeLocked).
func (f *FD2) arranged() roomWait {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return f.wait
}

// holdable reports whether fd 2 is a pipe the parent drains whose reader
// answers the child's marks: the reads can be the model's events.
func (f *FD2) holdable() bool { return f.arranged() == roomWait(f.hold) }

// SetDrainer names the in-process thread that drains fd 2's pipe.
func (f *FD2) SetDrainer(t *Thread) {
	f.g.mu.Lock()
	f.room.drainer = t
	f.arrangeLocked()
	f.g.changedLocked()
	f.g.mu.Unlock()
}

// Room is the resource a writer waits for.
func (f *FD2) Room() *PipeRoom { return f.room }

// NoteNoRoom records a room check that found no room: a writer has felt
// fd 2 stalled.
func (f *FD2) NoteNoRoom() {
	f.g.mu.Lock()
	f.noRoom++
	f.g.changedLocked()
	f.g.mu.Unlock()
}

// StallFelt reports whether a writer has felt fd 2 stalled: a room check
// found no room, or t waits for room now.
func (f *FD2) StallFelt(t *Thread) bool {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return f.noRoom > 0 || t.waiting == Resource(f.room)
}

// WaitRoom blocks t until fd 2 has room (POLLOUT), shown as a wait for room
// on fd 2; it returns at once when fd 2 is neither a pipe nor a tty.
func (f *FD2) WaitRoom(t *Thread) {
	if f.Kind != FDPipe && f.Kind != FDTTY {
		return
	}
	f.g.waitOn(t, f.room, func() {
		fds := []unix.PollFd{{Fd: 2, Events: unix.POLLOUT}}
		for {
			if _, err := unix.Poll(fds, -1); err == nil || !errors.Is(err, unix.EINTR) {
				return
			}
		}
	})
}

// sigintLandsOn reports whether a SIGINT interrupts t's blocked write(2).
func (f *FD2) sigintLandsOn(t *Thread) bool {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return f.sigintTo == t || f.sigintTo == nil && t.Main
}

// DeliverSIGINTTo makes t the thread whose blocked write(2) a SIGINT
// interrupts, in place of the main thread: the kernel delivered the signal
// there (Python's handler still runs on the main thread).
func (f *FD2) DeliverSIGINTTo(t *Thread) {
	f.g.mu.Lock()
	f.sigintTo = t
	f.g.mu.Unlock()
}

// beginWrite starts a write operation of t: a SIGINT that arrived before it
// is the eval loop's to handle, not this write's (a write(2) is interrupted
// only by a signal that lands while it blocks). It reports whether a signal
// can interrupt t's write(2) calls.
func (f *FD2) beginWrite(t *Thread) (interruptible bool) {
	if f.sigintLandsOn(t) && f.wake.ok() {
		f.wake.drain()
		return true
	}
	return false
}

func isTTY(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	return err == nil
}
