//go:build !linux

package childbin

import "syscall"

// dieWithParent: no Pdeathsig outside Linux.
func dieWithParent() *syscall.SysProcAttr { return nil }
