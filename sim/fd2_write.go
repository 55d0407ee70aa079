package sim

import (
	"errors"

	"golang.org/x/sys/unix"

	"logjam/telemetry"
)

// writeCall is one write(2) of b on the blocking fd 2, as the kernel runs
// it: it moves what fits and waits for room (roomWait). A signal that
// arrives while it waits ends it when interruptible (the main thread,
// where the kernel delivers SIGINT; Python installs its handler without
// SA_RESTART): with the bytes moved so far, or with none and EINTR. A
// write the kernel refuses (the fd2-write-errno failpoint: EPIPE, EAGAIN,
// ENOSPC, EIO) moves nothing and returns its errno, as write(2) returns
// -1; the caller decides, as its real code would. The caller drains stale
// wake-ups (wakePipe.drain) once, before its first call.
func (f *FD2) writeCall(t *Thread, b []byte, interruptible bool) (n int, errno unix.Errno) {
	defer f.room.endTurn(t)
	f.AwaitInFlight(t)
	if e := f.refuse(t, b); e != 0 {
		return 0, e
	}
	// Without a wake-up pipe no signal can end a wait.
	interruptible = interruptible && f.wake.ok()
	if f.Kind == FDTTY {
		if f.tty.lock(t, interruptible) {
			return 0, unix.EINTR
		}
		defer f.tty.unlock(t)
	}
	if f.probe < 0 {
		return f.blockingWrite(b), 0
	}
	w := f.arranged()
	w.beginWriting(t)
	defer w.endWriting(t)
	announced := false
	for n < len(b) {
		capped := false // the write took the room unheldRoom allows, not all of b
		if w.mustQueue(t) {
			// Others wait for the room the parent's next read frees: this
			// write takes its turn after them.
			if f.room.waitRead(t, interruptible) {
				f.wake.drain()
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
		// (13 MB of telemetry a run otherwise; pinned by
		// TestABlockedWriteIsOneEventPerWrite).
		if !announced {
			f.tel.Emit(telemetry.BlockedWrite{Thread: t.Name, Pending: len(b) - n, GIL: t.in.GIL.HeldBy(t)})
			announced = true
		}
		moved, woke := w.wait(t, b[n:], interruptible)
		n += moved
		if woke {
			f.wake.drain()
			return n, eintrIf(n == 0)
		}
	}
	return n, 0
}

func eintrIf(b bool) unix.Errno {
	if b {
		return unix.EINTR
	}
	return 0
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
