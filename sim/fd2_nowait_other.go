//go:build !linux

package sim

import "golang.org/x/sys/unix"

// writeNowait: no RWF_NOWAIT outside Linux; the refusal sends TryWrite to
// the non-blocking description, as logjam.hpp does where the kernel refuses.
func writeNowait([]byte) (int, error) { return 0, unix.EOPNOTSUPP }
