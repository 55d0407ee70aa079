//go:build !linux

package pipes

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// errUnsupported is what every kernel-facing call returns off Linux: the
// facts this package relies on (page-slot capacity, F_SETPIPE_SZ, /dev/pts)
// are Linux facts.
var errUnsupported = fmt.Errorf("pipes: not implemented on %s: %w", runtime.GOOS, errors.ErrUnsupported)

// New is unsupported off Linux.
func New(capacity int) (*Pipe, error) { return nil, errUnsupported }

// SetCapacity is unsupported off Linux.
func SetCapacity(f *os.File, n int) (int, error) { return 0, errUnsupported }

// Capacity is unsupported off Linux.
func Capacity(f *os.File) (int, error) { return 0, errUnsupported }

// Queued is unsupported off Linux.
func Queued(fd int) (int, error) { return 0, errUnsupported }

// QueuedFile is unsupported off Linux.
func QueuedFile(f *os.File) (int, error) { return 0, errUnsupported }

// PollWritable is unsupported off Linux.
func PollWritable(fd int, timeout time.Duration) (bool, error) { return false, errUnsupported }

// HasRoom is unsupported off Linux.
func (p Platform) HasRoom(fd int, wait time.Duration) (bool, error) { return false, errUnsupported }

// SmallPipeFull is unsupported off Linux.
func SmallPipeFull(fd int) (bool, error) { return false, errUnsupported }

// OpenPTY is unsupported off Linux.
func OpenPTY() (master, slave *os.File, err error) { return nil, nil, errUnsupported }

// waitReadable makes a Reader end at once: Wait reports errUnsupported.
func waitReadable(rc syscall.RawConn, pollable bool) error { return errUnsupported }
