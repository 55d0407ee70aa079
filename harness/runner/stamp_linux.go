package runner

import (
	"fmt"
	"syscall"
)

// fileStamp is a file's inode, size, modification and change time ("" if
// it cannot be read).
func fileStamp(path string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return ""
	}
	return fmt.Sprintf("%d %d %d.%09d %d.%09d", st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
