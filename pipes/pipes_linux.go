package pipes

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// New creates a pipe (O_CLOEXEC on both ends) and asks the kernel for
// capacity bytes with F_SETPIPE_SZ. The kernel rounds up to a power-of-two
// number of pages, at least one page; Pipe.Capacity is what F_GETPIPE_SZ then
// reports. capacity <= 0 keeps the kernel default (16 pages).
func New(capacity int) (*Pipe, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	// Only the read end's open file description becomes non-blocking; the
	// write end is a separate description and stays blocking for the child.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, os.NewSyscallError("fcntl O_NONBLOCK", err)
	}
	p := &Pipe{
		R: os.NewFile(uintptr(fds[0]), "|0"),
		W: os.NewFile(uintptr(fds[1]), "|1"),
	}
	if capacity > 0 {
		if _, err := SetCapacity(p.W, capacity); err != nil {
			p.Close()
			return nil, err
		}
	}
	got, err := Capacity(p.W)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.Capacity = got
	return p, nil
}

// SetCapacity resizes the pipe behind f (either end) with F_SETPIPE_SZ and
// returns the capacity the kernel chose. Above /proc/sys/fs/pipe-max-size it
// fails with EPERM unless the caller has CAP_SYS_RESOURCE; errors unwrap to
// the errno.
func SetCapacity(f *os.File, n int) (int, error) {
	var got int
	err := control(f, "fcntl F_SETPIPE_SZ", func(fd int) (err error) {
		got, err = unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, n)
		return err
	})
	return got, err
}

// Capacity reports the capacity of the pipe behind f (F_GETPIPE_SZ).
func Capacity(f *os.File) (int, error) {
	var got int
	err := control(f, "fcntl F_GETPIPE_SZ", func(fd int) (err error) {
		got, err = unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
		return err
	})
	return got, err
}

// control runs op on f's descriptor through RawConn, which (unlike f.Fd)
// does not switch a pollable file back to blocking mode.
func control(f *os.File, what string, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("pipes: %s: %w", what, err)
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = op(int(fd)) }); err != nil {
		return fmt.Errorf("pipes: %s: %w", what, err)
	}
	if opErr != nil {
		return fmt.Errorf("pipes: %w", os.NewSyscallError(what, opErr))
	}
	return nil
}

// Queued reports how many bytes are queued unread (FIONREAD). On Linux this
// works on either end of a pipe, which is what a writer needs. On a pty slave
// it counts the slave's unread input, not output waiting for the master.
func Queued(fd int) (int, error) {
	n, err := fionread(fd)
	if err != nil {
		return 0, fmt.Errorf("pipes: %w", os.NewSyscallError("ioctl FIONREAD", err))
	}
	return n, nil
}

// QueuedFile is Queued for an *os.File, through RawConn (control), so a
// file in Go's poller stays non-blocking under its reader.
func QueuedFile(f *os.File) (int, error) {
	var n int
	err := control(f, "ioctl FIONREAD", func(fd int) (err error) {
		n, err = fionread(fd)
		return err
	})
	return n, err
}

// fionread is the bare FIONREAD. x/sys/unix names it by its Linux alias:
// <asm/ioctls.h> defines TIOCINQ as FIONREAD on every architecture.
func fionread(fd int) (int, error) { return unix.IoctlGetInt(fd, unix.TIOCINQ) }

// PollWritable asks poll(2) whether fd has room (POLLOUT), waiting up to
// timeout; timeout <= 0 asks for an immediate answer. On a Linux pipe POLLOUT
// means a whole page slot is free, not merely some byte. A pipe whose reader
// is gone (POLLERR) or a tty whose other side hung up (POLLHUP) is reported
// as an error wrapping EPIPE, since a write would fail.
func PollWritable(fd int, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	for {
		ms := 0
		if remaining := time.Until(deadline); remaining > 0 {
			// Round up so a sub-millisecond remainder still waits.
			ms = int((remaining + time.Millisecond - 1) / time.Millisecond)
		}
		fds[0].Revents = 0
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue // Go's preemption signals interrupt poll; retry with what is left
		}
		if err != nil {
			return false, fmt.Errorf("pipes: %w", os.NewSyscallError("poll", err))
		}
		if n == 0 {
			return false, nil
		}
		re := fds[0].Revents
		switch {
		case re&unix.POLLNVAL != 0:
			return false, fmt.Errorf("pipes: poll fd %d: %w", fd, unix.EBADF)
		case re&(unix.POLLERR|unix.POLLHUP) != 0:
			return false, fmt.Errorf("pipes: poll fd %d: no reader: %w", fd, unix.EPIPE)
		}
		return re&unix.POLLOUT != 0, nil
	}
}

// macRecheckStep is how often the MacOS platform re-reads FIONREAD while it
// waits for room.
const macRecheckStep = 2 * time.Millisecond

// HasRoom reports whether a writer on fd would be told there is room, waiting
// up to wait for room to appear.
//
// Linux asks poll(2). MacOS answers what XNU's poll(2) would: XNU reports
// POLLOUT when MAX(16384, buffer size) - queued >= 512, so a pipe of 16 KiB or
// less looks like 16384 bytes and "has room" even when its real buffer is
// full. The emulation reads the real queue with FIONREAD and the real buffer
// size with F_GETPIPE_SZ, so fd must be a pipe.
func (p Platform) HasRoom(fd int, wait time.Duration) (bool, error) {
	switch p {
	case Linux:
		return PollWritable(fd, wait)
	case MacOS:
		deadline := time.Now().Add(wait)
		for {
			room, err := macReportsRoom(fd)
			if err != nil || room {
				return room, err
			}
			remaining := time.Until(deadline)
			if remaining <= 0 {
				return false, nil
			}
			// Polling, bounded by wait: the emulated condition is not one the
			// Linux kernel tracks, so no wake-up exists to block on (Linux
			// POLLOUT fires on a free page slot, not on XNU's byte arithmetic).
			time.Sleep(min(macRecheckStep, remaining))
		}
	}
	return false, fmt.Errorf("pipes: unknown platform %v", p)
}

func macReportsRoom(fd int) (bool, error) {
	queued, err := Queued(fd)
	if err != nil {
		return false, err
	}
	size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return false, fmt.Errorf("pipes: macOS emulation needs a pipe: %w", os.NewSyscallError("fcntl F_GETPIPE_SZ", err))
	}
	reported := max(MacSmallPipeReport, size)
	return reported-queued >= MacPipeBuf, nil
}

// SmallPipeFull applies the rule a careful macOS writer uses instead of
// trusting poll(2): a pipe reported as 16 KiB or less may really be a
// 512-byte pipe, so it is full once MacPipeBuf bytes are queued.
func SmallPipeFull(fd int) (bool, error) {
	queued, err := Queued(fd)
	if err != nil {
		return false, err
	}
	return queued >= MacPipeBuf, nil
}

// OpenPTY opens a new pseudo-terminal pair. The master is non-blocking and in
// Go's poller (give it to a Reader); the slave is blocking, opened with
// O_NOCTTY, in raw output mode (no OPOST, so no ONLCR: "\n" stays "\n") and
// with echo off, ready to be a child's fd 2.
func OpenPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("pipes: %w", err)
	}
	defer func() {
		if err != nil {
			master.Close()
			if slave != nil {
				slave.Close()
			}
			master, slave = nil, nil
		}
	}()
	var ptn uint32
	err = control(master, "ioctl TIOCSPTLCK", func(fd int) error {
		return unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0)
	})
	if err != nil {
		return nil, nil, err
	}
	err = control(master, "ioctl TIOCGPTN", func(fd int) (err error) {
		ptn, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	name := "/dev/pts/" + strconv.FormatUint(uint64(ptn), 10)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("pipes: %w", &os.PathError{Op: "open", Path: name, Err: err})
	}
	// A blocking descriptor wrapped by NewFile stays blocking and out of the
	// poller: the child gets the same file description.
	slave = os.NewFile(uintptr(sfd), name)
	err = control(slave, "ioctl TCGETS/TCSETS", func(fd int) error {
		tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return err
		}
		tio.Oflag &^= unix.OPOST | unix.ONLCR
		tio.Lflag &^= unix.ECHO | unix.ECHOE | unix.ECHOK | unix.ECHONL
		return unix.IoctlSetTermios(fd, unix.TCSETS, tio)
	})
	if err != nil {
		return nil, nil, err
	}
	return master, slave, nil
}

// waitReadable returns once the file behind rc has data, EOF or an error to
// report, without consuming anything, so the Reader can re-check its gate
// before read(2). On a pollable file it parks in Go's poller and a read
// deadline (Reader.Stop) wakes it; otherwise it blocks in poll(2).
func waitReadable(rc syscall.RawConn, pollable bool) error {
	var pollErr error
	err := rc.Read(func(fd uintptr) bool {
		timeout := 0
		if !pollable {
			timeout = -1
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, timeout)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				pollErr = os.NewSyscallError("poll", err)
				return true
			}
			// Any revents (POLLIN, POLLHUP, POLLERR) means read(2) has an answer.
			// Returning false makes Go park until epoll says readable.
			return n > 0
		}
	})
	if err != nil {
		return err
	}
	return pollErr
}
