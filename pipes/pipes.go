// Package pipes has one job: real OS pipes and ptys for fd 2: capacity,
// parent-side readers, room checks, and the macOS pipe-reporting emulation.
//
// Everything here drives the real kernel; nothing is faked. The macOS
// platform is the one emulation: it answers the question "would XNU's poll(2)
// say this pipe has room?" from the byte count of a real Linux pipe, because
// the suite runs on Linux but must reproduce the macOS false "room" report.
//
// Linux-specific code lives in *_linux.go. On other systems every call that
// touches the kernel returns an error wrapping errors.ErrUnsupported.
package pipes

import (
	"errors"
	"os"
	"strconv"
)

// macOS pipe constants (XNU bsd/kern/sys_pipe.c and sys/syslimits.h).
const (
	// MacPipeBuf is PIPE_BUF on macOS: the atomic-write size and the free
	// space poll(2) demands before it reports POLLOUT on a pipe.
	MacPipeBuf = 512
	// MacSmallPipeReport is PIPE_SIZE on macOS. XNU's poll/select/kqueue
	// compute free space as MAX(PIPE_SIZE, buffer size) - queued, so a pipe
	// whose real buffer is 16 KiB or less is reported as if it held 16384.
	MacSmallPipeReport = 16384
)

// Pipe is a real OS pipe meant to be a child's fd 2.
//
// R is the parent's end. It is non-blocking and registered with Go's poller
// so a Reader can be stopped while it waits for data. W is left blocking,
// exactly as a child process expects its stderr to be.
type Pipe struct {
	R, W *os.File
	// Capacity is the kernel's buffer size in bytes (F_GETPIPE_SZ) when the
	// pipe was created.
	Capacity int
}

// Close closes both ends. It may be called more than once; ends that are
// already closed are not an error.
func (p *Pipe) Close() error {
	var errs []error
	for _, f := range []*os.File{p.R, p.W} {
		if f == nil {
			continue
		}
		if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Platform selects whose poll(2) semantics a room check reproduces.
type Platform int

const (
	// Linux asks the real kernel: poll(2) for POLLOUT.
	Linux Platform = iota
	// MacOS emulates what XNU's poll(2) would report for the same queue.
	MacOS
)

func (p Platform) String() string {
	switch p {
	case Linux:
		return "linux"
	case MacOS:
		return "macos"
	}
	return "Platform(" + strconv.Itoa(int(p)) + ")"
}
