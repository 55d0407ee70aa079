package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"logjam/telemetry"
)

// FD2 variations the real rows are also played under (Options.FD2), each
// judged against the row's simulated verdict: the header must give the same
// verdict whatever fd 2 is.
const (
	// FD2Socket: fd 2 a UNIX stream socket the parent reads to the end
	// (journald's stdout stream): the non-blocking write is send(MSG_DONTWAIT).
	FD2Socket = "socket"
	// FD2NoProc: the row's own fd 2, /proc hidden from the child (an empty
	// tmpfs over it in the child's own mount namespace): no non-blocking
	// twin of a tty, no /proc/self anything.
	FD2NoProc = "noproc"
)

// fd2Arrangement is what Run needs of fd 2's arrangement (cell.FD2's).
type fd2Arrangement interface {
	Child() *os.File
	OnEvent(telemetry.Event)
	Collect() ([]byte, error)
	Abandon()
}

// socketFD2: a socketpair; the child gets one end as fd 2, the parent
// reads the other to EOF from the start.
type socketFD2 struct {
	child, parent *os.File
	buf           bytes.Buffer
	err           error
	done          chan struct{}
}

func newSocketFD2() (*socketFD2, error) {
	// Close-on-exec set under ForkLock, as the standard library does where
	// SOCK_CLOEXEC is missing (darwin builds this file too).
	syscall.ForkLock.RLock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("fd 2 as a UNIX socket: %w", err)
	}
	s := &socketFD2{child: os.NewFile(uintptr(fds[0]), "fd2-socket-child"), parent: os.NewFile(uintptr(fds[1]), "fd2-socket-parent"), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_, s.err = io.Copy(&s.buf, s.parent)
	}()
	return s, nil
}

func (s *socketFD2) Child() *os.File         { return s.child }
func (s *socketFD2) OnEvent(telemetry.Event) {}

// Collect closes the parent's copy of the child's end (the last writer) and
// waits for the reader's EOF.
func (s *socketFD2) Collect() ([]byte, error) {
	_ = s.child.Close()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.parent.Close()
		<-s.done
		return s.buf.Bytes(), errors.New("reading fd 2's socket to EOF: timed out")
	}
	_ = s.parent.Close()
	return s.buf.Bytes(), s.err
}

func (s *socketFD2) Abandon() { _, _ = s.Collect() }

// noProcArgs wraps a child's command line so that it runs in its own mount
// namespace with an empty tmpfs over /proc (needs root and util-linux's
// unshare).
func noProcArgs(args []string) []string {
	return append([]string{"unshare", "-m", "/bin/sh", "-c", `mount -t tmpfs none /proc && exec "$0" "$@"`}, args...)
}
