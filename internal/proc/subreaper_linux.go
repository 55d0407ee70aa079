package proc

import "golang.org/x/sys/unix"

// BecomeSubreaper makes this process adopt every orphan among its
// descendants (PR_SET_CHILD_SUBREAPER) instead of init, so that it can see
// and reap them.
func BecomeSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
