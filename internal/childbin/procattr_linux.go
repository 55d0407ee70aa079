package childbin

import "syscall"

// dieWithParent: the build dies with the process that started it, so a
// killed replay leaves no go command running.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
