package childbin

import (
	"context"
	"os/exec"
)

// groupGuard runs its arguments in the background and waits; on SIGTERM
// it kills its whole process group. With the guard leading a group of its
// own and SIGTERM as its parent-death signal (procattr_linux.go), a build
// dies with the process that started it, however that one dies: the go
// command and the compile and link processes it starts (which no
// Pdeathsig of ours reaches) alike.
const groupGuard = `trap 'kill -KILL 0' TERM; "$@" & wait $!`

// GoCommand is `go args...` under the group guard: the go command and the
// toolchain processes it starts are one process group, led by the guard,
// that dies with this process (Linux) and that ctx's end kills.
func GoCommand(ctx context.Context, args ...string) *exec.Cmd { return guarded(ctx, "go", args...) }

func guarded(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", groupGuard, "sh", name}, args...)...)
	cmd.SysProcAttr = guardAttr()
	cmd.Cancel = func() error { return killGroup(cmd) }
	return cmd
}
