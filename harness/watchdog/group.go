package watchdog

import (
	"errors"
	"os"
	"sync"
	"syscall"
)

// liveGroup is the process group of one child that Run is still watching.
type liveGroup struct {
	pgid      int
	leader    *os.Process   // the child itself
	killed    chan struct{} // closed by KillAll
	closeOnce sync.Once
}

// liveGroups is every group Run is watching, so that an interrupt handler can
// end them all with KillAll.
var liveGroups = struct {
	sync.Mutex
	set map[*liveGroup]struct{}
}{set: make(map[*liveGroup]struct{})}

func registerGroup(leader *os.Process) *liveGroup {
	g := &liveGroup{pgid: leader.Pid, leader: leader, killed: make(chan struct{})}
	liveGroups.Lock()
	liveGroups.set[g] = struct{}{}
	liveGroups.Unlock()
	return g
}

func unregisterGroup(g *liveGroup) {
	liveGroups.Lock()
	delete(liveGroups.set, g)
	liveGroups.Unlock()
}

// KillAll sends SIGKILL to the process group of every child a Run is
// watching, and makes each of those Runs return promptly with verdict
// Interrupted. It is meant for an interrupt handler (the watchdog installs
// none itself). It returns how many groups it killed.
func KillAll() int {
	liveGroups.Lock()
	defer liveGroups.Unlock()
	for g := range liveGroups.set {
		g.closeOnce.Do(func() { close(g.killed) })
		g.kill()
	}
	return len(liveGroups.set)
}

// quit asks the group for a dump. If the group is gone although the child
// was not reaped (it moved to another group), the child itself is asked.
func (g *liveGroup) quit() {
	if errors.Is(signalGroup(g.pgid, syscall.SIGQUIT), syscall.ESRCH) {
		_ = g.leader.Signal(syscall.SIGQUIT)
	}
}

// kill sends SIGKILL to every process of the group, and to the child itself
// in case it moved to another group: a child left alive would keep Run
// waiting for ever. ESRCH and "process already finished" are what the
// watchdog wants, not errors.
func (g *liveGroup) kill() {
	_ = signalGroup(g.pgid, syscall.SIGKILL)
	_ = g.leader.Kill()
}

// signalGroup sends sig to every process of the group.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return errors.New("watchdog: refusing to signal process group <= 1")
	}
	return syscall.Kill(-pgid, sig)
}
