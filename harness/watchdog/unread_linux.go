package watchdog

import (
	"os"

	"golang.org/x/sys/unix"
)

// unreadBytes is how many bytes the pipe f reads from still holds (FIONREAD, which Linux also names TIOCINQ);
// 0 when that cannot be known.
func unreadBytes(f *os.File) int {
	conn, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = conn.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
