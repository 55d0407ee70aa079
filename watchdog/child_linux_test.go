package watchdog

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// kernelSigaction is struct sigaction as rt_sigaction(2) takes it on amd64
// and arm64; all zero means SIG_DFL.
type kernelSigaction struct {
	handler, flags, restorer, mask uint64
}

// resetSignalToDefault puts sig back to SIG_DFL behind the Go runtime's back,
// so that the signal kills the process the way it kills a C program.
func resetSignalToDefault(sig syscall.Signal) error {
	var act kernelSigaction
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

const prSetChildSubreaper = 36

func becomeSubreaper() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// isZombie reports whether pid has died and waits for its parent to reap it.
func isZombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z'
	}
	return false
}
