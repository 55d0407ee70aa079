package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"logjam/internal/testkit"
	"logjam/telemetry"
)

// The by-hand line a random search prints, pasted where no terminal is (no
// /dev/tty, stdin from /dev/null): a hung program ends on its own at
// -deadline (exit 124). An fd 3 the child merely inherited gets no
// telemetry; -telemetry-fd 3 asks for it.
func TestAHungRunByHandWithoutATerminalEndsAtItsDeadline(t *testing.T) {
	bin := testkit.Child(t)
	for _, c := range []struct {
		name      string
		args      []string
		telemetry bool
	}{
		{"an inherited fd 3 stays empty", nil, false},
		{"-telemetry-fd 3 fills it", []string{"-telemetry-fd", "3"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fd3, err := os.Create(filepath.Join(t.TempDir(), "telemetry.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer fd3.Close()
			cmd := exec.Command(bin, append(c.args, "-deadline", "1s", "-scenario", "H1")...)
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, telemetry.FDEnv+"=") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.ExtraFiles = []*os.File{fd3}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var ee *exec.ExitError
			select {
			case err := <-done:
				if !errors.As(err, &ee) || ee.ExitCode() != 124 {
					t.Fatalf("ended with %v, want exit status 124", err)
				}
			case <-time.After(60 * time.Second): // generous: the deadline is 1 s
				_ = cmd.Process.Kill()
				t.Fatal("still running a minute later")
			}
			st, _ := fd3.Stat()
			if got := st.Size() > 0; got != c.telemetry {
				t.Fatalf("fd 3 holds %d bytes of telemetry; want some: %v", st.Size(), c.telemetry)
			}
		})
	}
}
