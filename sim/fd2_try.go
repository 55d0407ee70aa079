package sim

import (
	"errors"

	"golang.org/x/sys/unix"
)

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
			// Another writer inside its write(2) means EAGAIN.
			if !f.tty.tryLock(t) {
				return 0, unix.EAGAIN
			}
			defer f.tty.unlock(t)
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
