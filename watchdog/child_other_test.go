//go:build !linux

package watchdog

import (
	"errors"
	"syscall"
)

func resetSignalToDefault(sig syscall.Signal) error { return errors.ErrUnsupported }

func becomeSubreaper() error { return nil }

func isZombie(pid int) bool { return false }
