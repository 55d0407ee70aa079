package sim

import "golang.org/x/sys/unix"

// writeNowait is pwritev2(RWF_NOWAIT) on fd 2 itself: a write that returns
// EAGAIN instead of blocking, without changing the open file description.
func writeNowait(b []byte) (int, error) {
	return unix.Pwritev2(2, [][]byte{b}, -1, unix.RWF_NOWAIT)
}
