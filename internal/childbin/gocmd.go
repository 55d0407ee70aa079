package childbin

import (
	"context"
	"os"
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

// BuildEnv is the environment every build of the child runs with, and the
// suites' (logjam chaos) and logjam's own (the logjam script): the
// caller's, with cgo off. The child is pure Go, but pingcap/failpoint links
// net/http and with it net's cgo resolver, which made it a dynamically
// linked binary: each start ran the dynamic loader and libc's and cgo's
// initialisation. Static, a child's start takes about a fifth less CPU
// (docs/RANDOM.md, "Shrinking"); the run is the same Go code. The three
// built alike share every compiled package in the go command's cache.
func BuildEnv(extra ...string) []string {
	return append(append(os.Environ(), "CGO_ENABLED=0"), extra...)
}

// BuildCommand is `go build -o out ./cmd/simrt`, with BuildEnv, under the
// group guard (GoCommand); its Dir must be the module's root (the path is
// relative, so a module of another name, a test's fixture, builds too).
func BuildCommand(ctx context.Context, out string, extraEnv ...string) *exec.Cmd {
	cmd := GoCommand(ctx, "build", "-o", out, "./cmd/simrt")
	cmd.Env = BuildEnv(extraEnv...)
	return cmd
}

// CachedCommand is `go tool -n simrt` (the child is a tool in go.mod) with
// BuildEnv, under the group guard: it builds the child into the go
// command's own cache, if it is not there, and prints its path.
func CachedCommand(ctx context.Context, extraEnv ...string) *exec.Cmd {
	cmd := GoCommand(ctx, "tool", "-n", "simrt")
	cmd.Env = BuildEnv(extraEnv...)
	return cmd
}
