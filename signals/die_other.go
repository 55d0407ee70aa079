//go:build !linux

package signals

import (
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// DieBy ends the process by sig (best effort off Linux: Go's handler stays
// installed for signals Go treats as fatal).
func DieBy(sig syscall.Signal) {
	signal.Reset(sig)
	_ = unix.Kill(unix.Getpid(), sig)
	select {}
}
