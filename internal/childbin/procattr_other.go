//go:build !linux

package childbin

import (
	"os/exec"
	"syscall"
)

// guardAttr: no Pdeathsig outside Linux; the group is still killed when
// the context ends.
func guardAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
