package sim

import (
	"syscall"
	"unsafe"
)

// sigaction is the kernel's struct for rt_sigaction on Linux.
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// dieBySignal ends the process by sig with the default action, as a C
// program would: Go's own handler is replaced by SIG_DFL first (Go would
// otherwise print a traceback to fd 2 and exit 2).
func dieBySignal(sig syscall.Signal) {
	sa := sigaction{} // SIG_DFL
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
	var set uint64 = 1 << (uint(sig) - 1)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	tid := syscall.Gettid()
	_ = syscall.Tgkill(syscall.Getpid(), tid, sig)
	// The default action of sig ends the process before this line.
	select {}
}

// DieBySignal is exported for purpose-built children (a SIGSEGV crash).
func DieBySignal(sig syscall.Signal) { dieBySignal(sig) }
