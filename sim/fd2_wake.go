package sim

import (
	"errors"

	"golang.org/x/sys/unix"
)

// wakePipe is the self-pipe a signal's arrival writes a byte to (FD2.Wake):
// a write blocked in poll(2) wakes up, so the blocked Python write can end
// with EINTR and run the handlers. [0] is the read end, [1] the write end;
// -1 each when there is none (noWakePipe): no write is interruptible then.
type wakePipe [2]int

var noWakePipe = wakePipe{-1, -1}

// ok reports whether there is a wake-up pipe.
func (p wakePipe) ok() bool { return p[0] >= 0 }

// pending reads a wake-up left since the write began (a signal that
// arrived before it blocked), if any.
func (p wakePipe) pending() bool {
	if p[0] < 0 {
		return false
	}
	var b [1]byte
	n, _ := unix.Read(p[0], b[:])
	if n > 0 {
		p.drain()
		return true
	}
	return false
}

// drain reads every wake-up left.
func (p wakePipe) drain() {
	var b [64]byte
	for {
		n, err := unix.Read(p[0], b[:])
		if n <= 0 || err != nil {
			return
		}
	}
}

// pollRoomOrWake waits for POLLOUT on fd 2 or a byte on the wake pipe; it
// reports whether the wake pipe fired.
func (p wakePipe) pollRoomOrWake() bool {
	fds := []unix.PollFd{{Fd: 2, Events: unix.POLLOUT}, {Fd: int32(p[0]), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err != nil && errors.Is(err, unix.EINTR) {
			continue
		}
		return fds[1].Revents&unix.POLLIN != 0
	}
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
