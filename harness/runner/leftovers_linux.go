package runner

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"logjam/internal/proc"
)

// becomeSubreaper makes logjam adopt every orphan among its descendants, so
// killLeftovers can find a process that left the suites' process group.
func becomeSubreaper() { _ = proc.BecomeSubreaper() }

// killLeftovers kills and reaps every child logjam still has once the
// families are done: processes it adopted when their parents died. An
// orphan is adopted only once its parent has died, so it looks until two
// scans 50 ms apart find nothing (cleanup, not a verdict), at most 5 s. It
// returns what it killed (pid and name): the processes that were still
// running. A zombie (a process that had already died, such as the
// grandchild H6's watchdog kills with its child's group, adopted before
// anyone waited for it) is reaped and not reported: nothing was left
// running.
func killLeftovers() []string {
	var killed []string
	quiet := 0
	for until := time.Now().Add(5 * time.Second); quiet < 2 && time.Now().Before(until); {
		kids := children(os.Getpid())
		if len(kids) == 0 {
			quiet++
			time.Sleep(50 * time.Millisecond)
			continue
		}
		quiet = 0
		for _, k := range kids {
			name := command(k.pid)
			if !k.zombie {
				_ = syscall.Kill(k.pid, syscall.SIGKILL)
			}
			var ws syscall.WaitStatus
			if p, _ := syscall.Wait4(k.pid, &ws, 0, nil); p == k.pid && !k.zombie {
				killed = append(killed, fmt.Sprintf("%d (%s)", k.pid, name))
			}
		}
	}
	return killed
}

// child is a process whose parent is logjam, and whether it had exited
// (state Z) when /proc was read.
type child struct {
	pid    int
	zombie bool
}

// children lists the processes whose parent is ppid, from /proc.
func children(ppid int) []child {
	var kids []child
	for _, p := range proc.List() {
		if p.PPid == ppid {
			kids = append(kids, child{pid: p.Pid, zombie: p.Zombie()})
		}
	}
	return kids
}

// command is the process's name, from /proc.
func command(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// DieWithParentEnv=1 in a family's environment asks each of its spec
// processes to die with the Ginkgo that started it (DieWithParent): with
// Pdeathsig on the families and on every child the watchdog starts, a
// killed logjam (even by SIGKILL, which no handler sees) takes the whole
// tree with it at once.
const DieWithParentEnv = "LOGJAM_DIE_WITH_PARENT"

// DieWithParent makes this process die (SIGKILL) when its parent does, if
// DieWithParentEnv asks for it; a parent already gone ends it now.
func DieWithParent() {
	if os.Getenv(DieWithParentEnv) != "1" {
		return
	}
	ppid := os.Getppid()
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	if os.Getppid() != ppid {
		os.Exit(1) // the parent died before the signal was set
	}
}

// dieWithParent adds Pdeathsig: the process is killed when logjam dies,
// however it dies (SIGKILL included). It follows the thread that started
// the process; Go's runtime keeps its threads.
func dieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	attr.Pdeathsig = syscall.SIGKILL
	return attr
}
