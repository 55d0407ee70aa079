//go:build !linux

package sim

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
