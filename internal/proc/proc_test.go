package proc

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

func TestAStatLineIsParsedAfterTheLastParenthesis(t *testing.T) {
	for line, want := range map[string]Process{
		"42 (sleep) S 7 42 42 0 -1 4194304":                  {Pid: 42, PPid: 7, PGrp: 42, Comm: "sleep", State: 'S'},
		"9 (a b) c)) Z 1 3 3 0 -1 4194316 0 0":               {Pid: 9, PPid: 1, PGrp: 3, Comm: "a b) c)", State: 'Z'},
		"1234 ((sd-pam)) S 1233 1233 1233 0 -1 1077":         {Pid: 1234, PPid: 1233, PGrp: 1233, Comm: "(sd-pam)", State: 'S'},
		"5 (x y) R 1 5 5 0 -1 4194304 100 0 0 0 17 3 0 0 20": {Pid: 5, PPid: 1, PGrp: 5, Comm: "x y", State: 'R', CPUTicks: 20},
	} {
		got, err := parseStat(line)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", line, got, err, want)
		}
	}
	for _, bad := range []string{"", "42 sleep S 7 42", "42 (sleep) S 7", "x (sleep) S 7 42", "42 (sleep) S x 42", "42 (sleep) SS 7 42"} {
		if p, err := parseStat(bad); err == nil {
			t.Errorf("%q parsed as %+v", bad, p)
		}
	}
}

func TestReadAndListSeeThisProcessAndAChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	self, err := Read(os.Getpid())
	if err != nil || self.Pid != os.Getpid() || self.PPid != os.Getppid() || self.Zombie() {
		t.Fatalf("Read(self) = %+v, %v", self, err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var found bool
	for _, p := range List() {
		if p.Pid == cmd.Process.Pid {
			found = p.PPid == os.Getpid() && p.Comm == "sleep" && !p.Zombie()
		}
	}
	if !found {
		t.Errorf("List has no live sleep %d whose parent is this process", cmd.Process.Pid)
	}
	if _, err := Read(-1); err == nil {
		t.Error("Read(-1) found a process")
	}
	if main, err := ReadTask(os.Getpid(), strconv.Itoa(os.Getpid())); err != nil || main.Pid != os.Getpid() || main.Comm != self.Comm {
		t.Errorf("ReadTask(self, its main thread) = %+v, %v; want the thread of %+v", main, err, self)
	}
}
