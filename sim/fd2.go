package sim

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"logjam/pipes"
	"logjam/signals"
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
type FD2 struct {
	Kind  FDKind
	probe int // non-blocking description of fd 2, or -1
	// pipeCap: fd 2's pipe capacity (0: not a pipe, or unknown)
	pipeCap int
	room    *PipeRoom
	wake    [2]int // self-pipe written when a signal arrives, so a blocked
	// Python write can run the handlers (the EINTR path)
	g   *Graph
	tel *telemetry.Writer

	blksize int // st_blksize of fd 2 when it was opened: sys.stderr's buffer size

	nowaitRefused bool // the kernel refused RWF_NOWAIT on fd 2's pipe (before Linux 5.8)

	noRoom int // room checks that found no room; guarded by the graph's mutex

	// sigintTo is the thread whose blocked write(2) a SIGINT interrupts
	// (nil: the main thread, where Linux delivers a process-directed
	// signal; macOS may pick any thread); guarded by the graph's mutex.
	sigintTo *Thread

	// readerAcks: the parent's reader of fd 2 answers the marks asked with
	// ask (Options.ReaderAcks). One ask is open at a time (askMu), so
	// each StallAck answers the ask that waits for it.
	readerAcks bool
	// ttyWriter is the thread inside a write(2) on a terminal fd 2, as
	// Linux's tty atomic_write_lock: a write(2) on a tty excludes every
	// other writer until it returns, blocked or not (a non-blocking one
	// meets EAGAIN meanwhile). Graph mutex.
	ttyWriter *Thread
	askMu     sync.Mutex
	askOnce   sync.Once
	acks      chan os.Signal
	// holdMu orders a hold's start (MarkFD2Hold) after the last one's end
	// (MarkFD2Release) in what the parent reads.
	holdMu sync.Mutex
}

// ask writes mark for the parent and returns once the parent acknowledged
// it (signals.StallAck); false, at once, when no parent answers.
func (f *FD2) ask(mark string) bool {
	if !f.readerAcks || !f.tel.Enabled() {
		return false
	}
	f.askMu.Lock()
	defer f.askMu.Unlock()
	f.askOnce.Do(func() {
		f.acks = make(chan os.Signal, 1)
		signal.Notify(f.acks, signals.StallAck)
	})
	f.tel.Emit(telemetry.Mark{Name: mark})
	<-f.acks
	return true
}

// AskStall asks the parent's reader to stop before its next read(2) and
// returns once it has (MarkFD2Stall); at once when no parent answers.
func (f *FD2) AskStall() { f.ask(telemetry.MarkFD2Stall) }

// AskReader is a room check's end against a pipe the parent drains: it
// asks the parent's reader to read what the pipe holds unless it is
// stalled (MarkFD2Read) and returns true once the parent has answered, so
// a look at the pipe now finds room exactly when the reader reads on. How
// long a loaded machine kept the reader off the CPU decides nothing. False
// (nothing asked) for any other fd 2, one drained in-process (its drainer
// has barriers of its own), or no parent that answers.
func (f *FD2) AskReader() bool {
	if f.Kind != FDPipe || f.inProcessDrainer() {
		return false
	}
	// A hold starts before this ask or after its answer (holdMu): asked of
	// a reader held meanwhile, the answer (the pipe read empty) would never
	// come, and the proxy's reads wait for this thread (random search:
	// logjam, seed 114, HANG with no cycle in 2 of 24 plays).
	f.holdMu.Lock()
	defer f.holdMu.Unlock()
	if f.Held() {
		return false
	}
	return f.ask(telemetry.MarkFD2Read)
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

// PipeRoom is room on fd 2, held by the thread that drains it.
type PipeRoom struct {
	kind    FDKind
	drainer *Thread // an in-process forwarder, or nil: the parent drains
	reads   int     // reads the in-process drainer has made (graph mutex)
	wakes   int     // signals that arrived (Wake), for in-process waits
	// queue: the writers waiting for the in-process drainer, in the order
	// they began to wait; trying: the one whose turn it is to write into
	// the room a read made (Drained), until it has written all or waits
	// again. Graph mutex.
	queue  []*Thread
	trying *Thread
	// held: the parent's reads of its pipe are the model's events now
	// (FD2.hold): its reader reads only when parentReads asks, and the
	// writers take the room each read frees in turns, as behind an
	// in-process drainer. writing: threads inside a write call on that
	// pipe. Graph mutex.
	held    bool
	writing int
	// holds: holds begun, so a hold's parentReads ends with its hold;
	// heldRead: parentReads has asked a held read, not yet answered.
	holds    int
	heldRead bool
	// sigintsDue: SIGINTs on a blocked write a program's observer may
	// still send or has sent and not yet seen arrive (FD2.SIGINTDue); a
	// held reader does not read meanwhile. Graph mutex.
	sigintsDue int
}

// ResourceName implements Resource.
func (r *PipeRoom) ResourceName() string {
	if r.drainer == nil {
		return fmt.Sprintf("room on fd 2 (a %s drained by the parent process)", r.kind)
	}
	return fmt.Sprintf("room on fd 2 (a %s)", r.kind)
}

func (r *PipeRoom) holders() []*Thread {
	if r.drainer == nil {
		return nil
	}
	return []*Thread{r.drainer}
}

func openFD2(g *Graph, tel *telemetry.Writer) (*FD2, error) {
	f := &FD2{probe: -1, g: g, tel: tel, wake: [2]int{-1, -1}}
	var st unix.Stat_t
	if err := unix.Fstat(2, &st); err != nil {
		return nil, fmt.Errorf("fd 2 is not open: %w", err)
	}
	f.blksize = int(st.Blksize)
	if f.blksize <= 0 {
		f.blksize = 8192 // io.DEFAULT_BUFFER_SIZE
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		f.Kind = FDPipe
	case unix.S_IFREG:
		f.Kind = FDFile
	case unix.S_IFCHR:
		f.Kind = FDOther
		if isTTY(2) {
			f.Kind = FDTTY
		}
	default:
		f.Kind = FDOther
	}
	// A blocking fd 2, whatever the parent's end was.
	_ = unix.SetNonblock(2, false)
	f.openProbe(f.Kind)
	f.room = &PipeRoom{kind: f.Kind}
	if p, err := newWakePipe(); err == nil {
		f.wake = p
	}
	return f, nil
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

// SetDrainer names the in-process thread that drains fd 2's pipe.
func (f *FD2) SetDrainer(t *Thread) {
	f.g.mu.Lock()
	f.room.drainer = t
	f.g.changedLocked()
	f.g.mu.Unlock()
}

func (f *FD2) inProcessDrainer() bool {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return f.room.drainer != nil
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

// Wake interrupts a blocked interruptible write (a signal arrived).
func (f *FD2) Wake() {
	if f.wake[1] >= 0 {
		_, _ = unix.Write(f.wake[1], []byte{1})
	}
	f.g.mu.Lock()
	f.room.wakes++
	f.g.changedLocked()
	f.g.mu.Unlock()
}

// Drained is called by the in-process drainer after each read, with the
// room the read made. The writers waiting for that room try again one at a
// time, in the order they began to wait, each once the one before has
// written all it had or waits again; the drainer goes on only once every
// one has had its turn and none is still on its way back from its write
// (queued for the GIL again, or holding it). So a writer still shown
// waiting for room afterwards has really found none, which writer got the
// room is the queue's decision, and the drainer meets in the GIL's queue
// whoever its read let through. Without it, the drainer's next wait (for the
// GIL) could close a "cycle" with a writer whose write the read had already
// let through, and who took the GIL first, or the room, depended on the
// scheduler (random search: fd2 and adaptive on a wurlitzer pipe, HANG or
// BADESC).
func (f *FD2) Drained(drainer *Thread) {
	g := f.g
	g.mu.Lock()
	defer g.mu.Unlock()
	f.room.reads++
	// The drainer asks for the GIL next (to hand the chunk to Python): from
	// its read until it is queued, a holder that lets the GIL go waits for
	// it (Thread.queuing), so the FIFO queue, not the scheduler, decides
	// whether a writer that went on after its turn lets the GIL go to the
	// drainer or to another thread. A nil drainer is the parent's held
	// reader (parentReads): nothing of it asks for the GIL.
	if drainer != nil {
		drainer.queuing = true
	}
	g.changedLocked()
	for f.room.trying != nil || f.staleWaiterLocked() != nil || drainer != nil && g.inFlightLocked(drainer) {
		g.cond.Wait()
	}
}

// staleWaiterLocked is the first writer, in the order they began to wait,
// whose wait for the drainer's read began before the drainer's last read:
// the next to try its write again. Graph mutex held.
func (f *FD2) staleWaiterLocked() *Thread {
	for _, t := range f.room.queue {
		if t.waiting == Resource(f.room) && t.roomSince < f.room.reads {
			return t
		}
	}
	return nil
}

// endTurn ends t's turn at the room a read made (Drained): it has written
// all it had, or is about to wait again.
func (f *FD2) endTurn(t *Thread) {
	f.g.mu.Lock()
	if f.room.trying == t {
		f.room.trying = nil
		f.g.changedLocked()
	}
	f.g.mu.Unlock()
}

// waitDrainerRead is a writer's wait for room on a pipe an in-process
// thread drains: until the drainer has read again (Drained) and it is this
// writer's turn to try, or, when interruptible, a signal arrived (woke).
// Shown as a wait for room. A writer woken by a read holds the turn until
// its write call ends or it waits again (endTurn).
func (f *FD2) waitDrainerRead(t *Thread, interruptible bool) (woke bool) {
	if interruptible && f.wakePending() {
		return true
	}
	return f.awaitDrainerRead(t, interruptible, nil, nil)
}

// awaitDrainerRead is waitDrainerRead after its look for a pending wake-up:
// queued (before, if any, runs with the graph mutex held just before t is
// queued; queued, if any, without it just after), t waits for its turn.
func (f *FD2) awaitDrainerRead(t *Thread, interruptible bool, before, queued func()) (woke bool) {
	g := f.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if before != nil {
		before()
	}
	if f.room.trying == t {
		f.room.trying = nil
	}
	reads, wakes := f.room.reads, f.room.wakes
	t.waiting, t.roomSince, t.interruptible = f.room, reads, interruptible
	t.waits++
	f.room.queue = append(f.room.queue, t)
	g.changedLocked()
	if queued != nil {
		g.mu.Unlock()
		queued()
		g.mu.Lock()
	}
	for !(f.room.reads != reads && f.room.trying == nil && f.staleWaiterLocked() == t) &&
		f.room.readsAreEventsLocked() && !(interruptible && f.room.wakes != wakes) {
		g.cond.Wait()
	}
	woke = f.room.reads == reads && interruptible && f.room.wakes != wakes
	if f.room.reads != reads && f.room.readsAreEventsLocked() && !woke {
		f.room.trying = t
	}
	if i := slices.Index(f.room.queue, t); i >= 0 {
		f.room.queue = slices.Delete(f.room.queue, i, i+1)
	}
	t.waiting, t.interruptible = nil, false
	g.changedLocked()
	return woke
}

// wakePending reads a wake-up left since the write began (a signal that
// arrived before it blocked), if any.
func (f *FD2) wakePending() bool {
	if f.wake[0] < 0 {
		return false
	}
	var b [1]byte
	n, _ := unix.Read(f.wake[0], b[:])
	if n > 0 {
		f.drainWake()
		return true
	}
	return false
}

func (f *FD2) drainWake() {
	var b [64]byte
	for {
		n, err := unix.Read(f.wake[0], b[:])
		if n <= 0 || err != nil {
			return
		}
	}
}

// writeCall is one write(2) of b on the blocking fd 2, as the kernel runs
// it: it moves what fits and waits for room. A signal that arrives while it
// waits ends it when interruptible (the main thread, where the kernel
// delivers SIGINT; Python installs its handler without SA_RESTART): with
// the bytes moved so far, or with none and EINTR. A write the kernel
// refuses (the fd2-write-errno failpoint: EPIPE, EAGAIN, ENOSPC, EIO)
// moves nothing and returns its errno, as write(2) returns -1; the caller
// decides, as its real code would. The caller drains stale wake-ups
// (drainWake) once, before its first call.
func (f *FD2) writeCall(t *Thread, b []byte, interruptible bool) (n int, errno unix.Errno) {
	defer f.endTurn(t)
	f.AwaitInFlight(t)
	if e := f.refuse(t, b); e != 0 {
		return 0, e
	}
	if f.Kind == FDTTY {
		if f.lockTTY(t, interruptible) {
			return 0, unix.EINTR
		}
		defer f.unlockTTY(t)
	}
	if f.probe < 0 {
		return f.blockingWrite(b), 0
	}
	if f.holdable() {
		f.beginWriting()
		defer f.endWriting(t)
	}
	announced := false
	for n < len(b) {
		capped := false // the write took the room unheldRoom allows, not all of b
		if f.mustQueue(t) {
			// Others wait for the room the parent's next read frees: this
			// write takes its turn after them.
			if f.waitDrainerRead(t, interruptible && f.wake[0] >= 0) {
				f.drainWake()
				return n, eintrIf(n == 0)
			}
			continue
		}
		chunk := b[n:]
		if c := f.unheldRoom(); c >= 0 && c < len(chunk) {
			chunk, capped = chunk[:c], true
		}
		m, err := unix.Write(f.probe, chunk)
		if m > 0 {
			n += m
		}
		if n == len(b) {
			return n, 0
		}
		if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			// A real EPIPE (the parent closed its end; SIGPIPE is
			// ignored, as Python ignores it): the bytes are gone.
			return len(b), 0
		}
		if err == nil && m > 0 && !capped {
			continue
		}
		// The kernel said no room, or the rest meets a full pipe
		// (unheldRoom): this thread now waits for the drainer.
		// One event per write that blocked, not per wait: behind a
		// forwarder that reads a byte at a time it waits once a byte
		// (160,000 events, 13 MB of telemetry in one run of seed 154).
		if !announced {
			f.tel.Emit(telemetry.BlockedWrite{Thread: t.Name, Pending: len(b) - n, GIL: t.in.GIL.HeldBy(t)})
			announced = true
		}
		if f.inProcessDrainer() || f.Held() {
			if f.waitDrainerRead(t, interruptible && f.wake[0] >= 0) {
				f.drainWake()
				return n, eintrIf(n == 0)
			}
			continue
		}
		if f.holdable() {
			if f.holdAndWait(t, interruptible && f.wake[0] >= 0) {
				f.drainWake()
				return n, eintrIf(n == 0)
			}
			continue
		}
		if !interruptible || f.wake[0] < 0 {
			rest := b[n:]
			f.g.waitOn(t, f.room, func() { n += f.blockingWrite(rest) })
			return n, 0
		}
		woke := false
		f.g.waitOnMode(t, f.room, true, func() { woke = f.pollRoomOrWake() })
		if woke {
			f.drainWake()
			return n, eintrIf(n == 0)
		}
	}
	return n, 0
}

// lockTTY takes the terminal's write lock for t's write(2) (ttyWriter).
// Waiting for it is shown as a wait for room on fd 2: its holder waits for
// the parent to read. A signal ends the wait when interruptible
// (mutex_lock_interruptible: EINTR, nothing written); it reports whether
// one did. The model's write is a non-blocking probe and then a blocking
// write of the rest: without the lock another thread's write landed
// between the two, inside the line, where the kernel lets none.
func (f *FD2) lockTTY(t *Thread, interruptible bool) (woke bool) {
	g := f.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if f.ttyWriter == nil {
		f.ttyWriter = t
		return false
	}
	interruptible = interruptible && f.wake[0] >= 0
	if interruptible && f.wakePending() {
		return true
	}
	wakes := f.room.wakes
	t.waiting, t.interruptible = f.room, interruptible
	t.waits++
	g.changedLocked()
	for f.ttyWriter != nil && !(interruptible && f.room.wakes != wakes) {
		g.cond.Wait()
	}
	t.waiting, t.interruptible = nil, false
	g.changedLocked()
	if f.ttyWriter != nil {
		f.drainWake()
		return true
	}
	f.ttyWriter = t
	return false
}

func (f *FD2) unlockTTY(t *Thread) {
	f.g.mu.Lock()
	if f.ttyWriter == t {
		f.ttyWriter = nil
		f.g.changedLocked()
	}
	f.g.mu.Unlock()
}

func eintrIf(b bool) unix.Errno {
	if b {
		return unix.EINTR
	}
	return 0
}

// beginWrite starts a write operation of t: a SIGINT that arrived before it
// is the eval loop's to handle, not this write's (a write(2) is interrupted
// only by a signal that lands while it blocks). It reports whether a signal
// can interrupt t's write(2) calls.
func (f *FD2) beginWrite(t *Thread) (interruptible bool) {
	if f.sigintLandsOn(t) && f.wake[0] >= 0 {
		f.drainWake()
		return true
	}
	return false
}

// TryWrite writes b to fd 2 without blocking, as logjam.hpp's
// fd2::try_write does: pwritev2(RWF_NOWAIT) on fd 2 itself for a pipe;
// where the kernel refuses it, and for a tty, the non-blocking description
// (a file never blocks). It returns the bytes that went out; fewer than
// len(b) when fd 2 had no room for the rest.
//
// A refused write (the fd2-write-errno failpoint) is what the kernel
// answers: EAGAIN is "no room" (0 taken), any other errno gives the bytes
// up (len(b), as try_write does); TryWriteErr returns which.
func (f *FD2) TryWrite(t *Thread, b []byte) int {
	n, _ := f.TryWriteErr(t, b)
	return n
}

// TryWriteErr is TryWrite that also returns the errno of a refused write
// (0: none).
func (f *FD2) TryWriteErr(t *Thread, b []byte) (int, unix.Errno) {
	f.AwaitInFlight(t)
	if f.HeldBusy(t) {
		// The room the parent's next read frees is the waiting writers'.
		return 0, 0
	}
	switch e := f.refuse(t, b); e {
	case 0:
		if f.Kind == FDTTY {
			// tty_write_lock with O_NDELAY: another writer inside its
			// write(2) means EAGAIN.
			f.g.mu.Lock()
			busy := f.ttyWriter != nil
			if !busy {
				f.ttyWriter = t
			}
			f.g.mu.Unlock()
			if busy {
				return 0, unix.EAGAIN
			}
			defer f.unlockTTY(t)
		}
		if c := f.unheldRoom(); c >= 0 && c < len(b) {
			return f.tryWrite(b[:c]), 0
		}
		return f.tryWrite(b), 0
	case unix.EAGAIN:
		return 0, e
	default:
		return len(b), e
	}
}

func (f *FD2) tryWrite(b []byte) int {
	if f.Kind == FDPipe && !f.nowaitRefused {
		n := 0
		for n < len(b) {
			m, err := writeNowait(b[n:])
			if m > 0 {
				n += m
			}
			switch {
			case err == nil && m > 0:
			case errors.Is(err, unix.EINTR):
			case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
				f.nowaitRefused = true
				return n + f.tryWrite(b[n:])
			case err == nil, errors.Is(err, unix.EAGAIN):
				return n
			default:
				return len(b)
			}
		}
		return n
	}
	if f.probe < 0 {
		return f.blockingWrite(b)
	}
	n := 0
	for n < len(b) {
		m, err := unix.Write(f.probe, b[n:])
		if m > 0 {
			n += m
		}
		switch {
		case err == nil && m > 0:
		case errors.Is(err, unix.EINTR):
		case err == nil, errors.Is(err, unix.EAGAIN):
			return n
		default:
			return len(b) // EPIPE and the like: gone, as for a C write
		}
	}
	return n
}

// WriteDirect is fwrite of b on the unbuffered C stderr (glibc): write(2)
// until every byte is out, blocking while fd 2 has no room; a call that a
// signal ends with nothing moved (EINTR) ends the fwrite, and the rest of b
// is lost (glibc does not retry EINTR). It returns the bytes written.
//
// A write(2) the kernel refuses (EPIPE, EAGAIN, ENOSPC, EIO) ends the
// fwrite too: glibc sets the stream's error flag and retries none of them,
// so the rest of b is lost (the refused bytes are in the failpoint's
// telemetry, FD2Refused).
func (f *FD2) WriteDirect(t *Thread, b []byte) int {
	n, errno := f.WriteUntilSignal(t, b)
	if errno == unix.EINTR {
		f.tel.Emit(telemetry.WriteInterrupted{Thread: t.Name, Written: n, Lost: len(b) - n, By: "fwrite: EINTR is not retried"})
	}
	return n
}

// WriteAll is logjam's write_all: a write(2) loop that retries EINTR (the
// signal's flag is already set for the eval loop) and EAGAIN (no room: it
// waits for POLLOUT and writes again), blocking while fd 2 has no room; an
// error the kernel will answer again (EPIPE, ENOSPC, EIO) gives the rest of
// b up, as fwrite would. It returns that errno (0: every byte went out).
func (f *FD2) WriteAll(t *Thread, b []byte) unix.Errno {
	for len(b) > 0 {
		n, errno := f.WriteUntilSignal(t, b)
		b = b[n:]
		switch errno {
		case 0, unix.EINTR:
		case unix.EAGAIN:
			f.WaitRoom(t)
		default:
			return errno
		}
	}
	return 0
}

// WriteUntilSignal is a write(2) loop over b that stops early when a signal
// ends a blocked call with nothing moved (EINTR) or the kernel refuses a
// call (its errno); it returns the bytes written and that errno (0: all of
// b went out).
func (f *FD2) WriteUntilSignal(t *Thread, b []byte) (n int, errno unix.Errno) {
	intr := f.beginWrite(t)
	for n < len(b) {
		m, e := f.writeCall(t, b[n:], intr)
		n += m
		if e != 0 {
			return n, e
		}
	}
	return n, 0
}

// pollRoomOrWake waits for POLLOUT on fd 2 or a byte on the wake pipe; it
// reports whether the wake pipe fired.
func (f *FD2) pollRoomOrWake() bool {
	fds := []unix.PollFd{{Fd: 2, Events: unix.POLLOUT}, {Fd: int32(f.wake[0]), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err != nil && errors.Is(err, unix.EINTR) {
			continue
		}
		return fds[1].Revents&unix.POLLIN != 0
	}
}

func (f *FD2) blockingWrite(b []byte) int {
	n := 0
	for n < len(b) {
		m, err := unix.Write(2, b[n:])
		if m > 0 {
			n += m
		}
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return len(b)
		}
	}
	return n
}

func isTTY(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	return err == nil
}
