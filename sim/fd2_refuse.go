package sim

import (
	"golang.org/x/sys/unix"

	"logjam/failpoints"
	"logjam/telemetry"
)

// Errnos are the errors the fd2-write-errno failpoint makes a write(2) on
// fd 2 return, by the failpoint's value.
var Errnos = map[string]unix.Errno{
	"EPIPE":  unix.EPIPE,  // the reader is gone (SIGPIPE ignored, as Python ignores it)
	"EAGAIN": unix.EAGAIN, // O_NONBLOCK set on fd 2 by someone else, no room now
	"ENOSPC": unix.ENOSPC, // the disk fd 2's file is on is full
	"EIO":    unix.EIO,    // a low-level I/O error (a hung-up terminal, a failing disk)
}

// refuse evaluates the fd2-write-errno failpoint for one write(2) of b on
// fd 2 (every write call of the model passes here once: a blocking write,
// a non-blocking try). When it fires, the kernel refuses the call: nothing
// is moved, and the refusal is recorded (FD2Refused) with the bytes
// offered, the evidence by which the ledger tells a line the kernel
// refused from one the sink lost.
func (f *FD2) refuse(t *Thread, b []byte) unix.Errno {
	name, ok := failpoints.String(failpoints.FD2WriteErrno)
	if !ok {
		return 0
	}
	e, ok := Errnos[name]
	if !ok {
		return 0
	}
	who := ""
	if t != nil {
		who = t.Name
	}
	f.tel.Emit(telemetry.FD2Refused{Thread: who, Errno: name, B: append([]byte(nil), b...)})
	return e
}
