package signals

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DieBy ends the process by sig with its default action, as a C program
// would: Go's handler is replaced by SIG_DFL first (Go would print a
// traceback to fd 2 and exit 2), sig is unblocked, and sent to this thread.
//
// x/sys/unix has no sigaction; SIG_DFL with no flags and an empty mask is an
// all-zero kernel sigaction on every Linux architecture, so a zeroed buffer
// (larger than any arch's struct) needs no layout.
func DieBy(sig syscall.Signal) {
	var sigDFL [8]uint64
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&sigDFL)), 0, 8, 0, 0)
	var set unix.Sigset_t
	const bits = syscall.Signal(unsafe.Sizeof(set.Val[0]) * 8)
	set.Val[(sig-1)/bits] |= 1 << ((sig - 1) % bits)
	_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	select {} // the default action of sig ends the process first
}
