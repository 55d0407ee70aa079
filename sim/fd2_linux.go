package sim

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TCGETS

func newWakePipe() ([2]int, error) {
	var p [2]int
	err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK)
	return p, err
}
