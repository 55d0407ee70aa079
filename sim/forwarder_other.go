//go:build !linux

package sim

import (
	"errors"
	"fmt"
	"runtime"
)

var errCaptureUnsupported = fmt.Errorf("sim: fd-2 capture with a forwarder needs Linux (F_SETPIPE_SZ, /proc/self/fd), not %s: %w", runtime.GOOS, errors.ErrUnsupported)

// CaptureFD2 needs Linux.
func (rt *Runtime) CaptureFD2(style ForwarderStyle, sink Stream) (*FD2Capture, error) {
	return nil, errCaptureUnsupported
}

// Close needs Linux.
func (c *FD2Capture) Close(t *Thread) error { return errCaptureUnsupported }

func readChunk(fd int, buf []byte) (int, bool) { return 0, false }

func writeAll(fd int, b []byte) {}

func (c *FD2Capture) awaitRead() {}
