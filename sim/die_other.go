//go:build !linux

package sim

import (
	"os/signal"
	"syscall"
)

func dieBySignal(sig syscall.Signal) {
	signal.Reset(sig)
	_ = syscall.Kill(syscall.Getpid(), sig)
	select {}
}

// DieBySignal is exported for purpose-built children (a SIGSEGV crash).
func DieBySignal(sig syscall.Signal) { dieBySignal(sig) }
