package childbin

import (
	"os/exec"
	"syscall"
)

// guardAttr: the guard leads its own process group and gets SIGTERM when
// its parent dies (then kills the group: GoCommand).
func guardAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
