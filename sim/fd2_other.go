//go:build !linux

package sim

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA

func newWakePipe() ([2]int, error) {
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		return p, err
	}
	for _, fd := range p {
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			return p, err
		}
	}
	return p, nil
}
