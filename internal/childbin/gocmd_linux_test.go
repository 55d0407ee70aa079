package childbin

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"logjam/internal/proc"
)

const guardHelperEnv = "CHILDBIN_GUARD_HELPER"

// The helper starts a guarded command whose own child outlives it (as the
// go command's compile and link do), prints the guard's process group,
// and waits to be killed.
func init() {
	if os.Getenv(guardHelperEnv) == "" {
		return
	}
	cmd := guarded(context.Background(), "sh", "-c", "sleep 60 & sleep 60")
	if err := cmd.Start(); err != nil {
		os.Exit(3)
	}
	fmt.Println(cmd.Process.Pid)
	select {}
}

// SIGKILL of the process that started a guarded command (no handler of
// its runs) takes the command's whole group with it, grandchildren
// included, within a second.
func TestAGuardedCommandDiesWithItsStarter(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), guardHelperEnv+"=1")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(line))
	time.Sleep(200 * time.Millisecond) // the sleeps have started
	if err := syscall.Kill(-pgid, 0); err != nil {
		t.Fatalf("the guarded group %d is not running: %v", pgid, err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	time.Sleep(time.Second)
	if live := liveInGroup(pgid); len(live) > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		t.Fatalf("the guarded group %d is still running 1 s after its starter died: %v", pgid, live)
	}
}

// liveInGroup lists the processes of group pgid that are not zombies (a
// zombie runs nothing; its reaper here may be slow).
func liveInGroup(pgid int) []string {
	var live []string
	for _, p := range proc.List() {
		if p.PGrp == pgid && !p.Zombie() {
			live = append(live, fmt.Sprintf("%d (%s) %c", p.Pid, p.Comm, p.State))
		}
	}
	return live
}
