// Package fdscan finds this process's descriptors by what they are: the read
// end of a pipe another descriptor writes (an in-process forwarder's), and
// a copy of an object seen earlier (what fd 2 was when a sink was
// installed). The model's sink asks it what logjam.hpp asks the kernel, with
// the same system calls (fstat, fcntl), so the two find the same things.
package fdscan

import (
	"golang.org/x/sys/unix"
)

// Limit is how many descriptors a scan looks at (0 to Limit-1): what
// logjam.hpp scans, a bound on a fatal path that may run in a signal
// handler (no /proc, no allocation).
const Limit = 1024

// Identity is the object a descriptor is open on: st_dev and st_ino.
type Identity struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// Of is fd's identity; ok is false when fstat fails (fd not open).
func Of(fd int) (id Identity, ok bool) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return Identity{}, false
	}
	return Identity{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, true
}

// PipeReader is a descriptor of this process open for reading on the pipe
// fd writes to, or -1: fd is no pipe, or its reader lives elsewhere (the
// parent's, a shell's).
func PipeReader(fd int) int {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return -1
	}
	want := Identity{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	for d := 0; d < Limit; d++ {
		if d == fd {
			continue
		}
		if id, ok := Of(d); !ok || id != want {
			continue
		}
		fl, err := unix.FcntlInt(uintptr(d), unix.F_GETFL, 0)
		if err == nil && fl&unix.O_ACCMODE == unix.O_RDONLY {
			return d
		}
	}
	return -1
}

// Copy is a descriptor other than except that is open on id, or -1.
func Copy(id Identity, except int) int {
	for d := 0; d < Limit; d++ {
		if d == except {
			continue
		}
		if got, ok := Of(d); ok && got == id {
			return d
		}
	}
	return -1
}
