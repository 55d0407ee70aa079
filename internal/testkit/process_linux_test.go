package testkit

import (
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

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after 10 s: %s", what)
		}
	}
}

// A process that has exited and is not yet reaped is a zombie, and gone;
// a live one is neither; once reaped it is gone and not a zombie.
func TestIsZombieAndGone(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	sleep.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	pid := sleep.Process.Pid
	defer sleep.Wait()
	defer sleep.Process.Kill()
	if IsZombie(pid) || Gone(pid) || Gone(-pid) {
		t.Fatalf("a live sleep %d: zombie %v, gone %v, its group gone %v", pid, IsZombie(pid), Gone(pid), Gone(-pid))
	}
	if !Gone(-os.Getpid()) && proc.List() != nil {
		// This process leads no group of its own under go test; a group
		// of that number has no live member.
		if p, _ := proc.Read(os.Getpid()); p.PGrp != os.Getpid() {
			t.Errorf("the group %d with no member is not gone", os.Getpid())
		}
	}
	if err := sleep.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed sleep a zombie", func() bool { return IsZombie(pid) })
	if !Gone(pid) || !Gone(-pid) {
		t.Errorf("a zombie: gone %v, its group gone %v", Gone(pid), Gone(-pid))
	}
	_ = sleep.Wait()
	if IsZombie(pid) || !Gone(pid) {
		t.Errorf("reaped: zombie %v, gone %v", IsZombie(pid), Gone(pid))
	}
}

// A group whose leader is a zombie is not gone while a member lives.
func TestAGroupIsGoneWhenNoMemberLives(t *testing.T) {
	sh := exec.Command("sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := sh.Process.Pid
	defer func() { _ = syscall.Kill(-pgid, syscall.SIGKILL); _ = sh.Wait() }()
	var member int
	if _, err := fmt.Fscan(out, &member); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the leader sh a zombie", func() bool { return IsZombie(pgid) })
	if Gone(-pgid) {
		t.Fatalf("the group %d is gone while its sleep %d lives", pgid, member)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the group gone once its sleep is killed", func() bool { return Gone(-pgid) })
}

// A subreaper adopts the orphan its child leaves.
func TestBecomeSubreaperAdoptsAnOrphan(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	}()
	waitFor(t, fmt.Sprintf("the orphan %d adopted by this process %d", pid, os.Getpid()), func() bool {
		p, err := proc.Read(pid)
		return err == nil && p.PPid == os.Getpid()
	})
}

// Tagged finds a live process by a whole KEY=VALUE of its environment,
// with its command line; not one whose value only starts alike, nor one
// without the tag, nor a zombie.
func TestTaggedFindsLiveProcessesByAWholeEnvironmentEntry(t *testing.T) {
	tag := fmt.Sprintf("LOGJAM_TESTKIT_TAG=%d", os.Getpid())
	start := func(env ...string) *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		cmd.Env = append(os.Environ(), env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	tagged := start(tag)
	start(tag + "0")
	start()
	want := strconv.Itoa(tagged.Process.Pid) + ": sleep 30"
	if got := Tagged(tag); len(got) != 1 || got[0] != want {
		t.Fatalf("Tagged(%q) = %q, want [%q]", tag, got, want)
	}
	_ = tagged.Process.Kill()
	waitFor(t, "the tagged sleep is a zombie", func() bool { return IsZombie(tagged.Process.Pid) })
	if got := Tagged(tag); len(got) != 0 {
		t.Errorf("Tagged lists a zombie: %q", got)
	}
}
