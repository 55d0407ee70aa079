package testkit

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"logjam/internal/proc"
)

// BecomeSubreaper makes the test process adopt its orphaned descendants
// instead of init, so that a test can reap them and then see their group
// gone (init in a container does not always reap).
func BecomeSubreaper() error { return proc.BecomeSubreaper() }

// IsZombie reports whether pid has died and waits for its parent to reap
// it; a pid /proc does not show is not a zombie.
func IsZombie(pid int) bool {
	p, err := proc.Read(pid)
	return err == nil && p.Zombie()
}

// Gone reports whether no live process is left: for pid > 0 that process,
// for pid < 0 any member of the group -pid. A zombie counts as gone: it is
// dead, only waiting for a reaper (init in a container may never reap it).
func Gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	for _, p := range proc.List() {
		if !p.Zombie() && (pid > 0 && p.Pid == pid || pid < 0 && p.PGrp == -pid) {
			return false
		}
	}
	return true
}

// Tagged lists the live processes whose environment holds tag, a whole
// KEY=VALUE (everything a run starts inherits it: go, ginkgo, the suites,
// simrt, its children), each as "pid: command line".
func Tagged(tag string) []string {
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var found []string
	for _, path := range envs {
		b, err := os.ReadFile(path)
		if err != nil || !hasEntry(b, tag) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if IsZombie(pid) {
			continue // a zombie runs nothing
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "cmdline"))
		found = append(found, strconv.Itoa(pid)+": "+strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
	}
	return found
}

// hasEntry reports whether a NUL-separated environment holds kv whole.
func hasEntry(environ []byte, kv string) bool {
	for _, e := range strings.Split(string(environ), "\x00") {
		if e == kv {
			return true
		}
	}
	return false
}
