package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"logjam/internal/testkit"
	"logjam/pipes"
	"logjam/telemetry"
)

// A person runs a deadlocking cell by hand on a terminal (a pty is its
// controlling terminal, no watchdog): the cycle shows on the terminal the
// moment it forms; Ctrl-C reaches the simulated program and says so, and
// the process goes on hanging, as the real one would; Ctrl-\ shows the lock
// table and the stacks and ends the process.
func TestAHungCellRunByHandShowsTheCycleAndEndsOnCtrlBackslash(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux: pipes.OpenPTY")
	}
	bin := testkit.Child(t)
	master, slave, err := pipes.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	cmd := exec.Command(bin, "-scenario", "H1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, telemetry.FDEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, devnull
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()

	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// A bound on a missing line, not a timing claim.
	see := func(what string) {
		t.Helper()
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			ok := strings.Contains(screen.String(), what)
			mu.Unlock()
			if ok {
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the terminal never showed %q:\n%s", what, screen.String())
	}

	see("deadlock: thread A holds lock X and waits for lock Y (held by B)")
	see(`Ctrl-\ prints the lock table`)
	if _, err := master.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	see("SIGINT: Ctrl-C is the simulated program's SIGINT")
	select {
	case err := <-waited:
		t.Fatalf("Ctrl-C ended the hung program (%v): it is the model's SIGINT", err)
	default:
	}
	if _, err := master.Write([]byte{0x1c}); err != nil { // Ctrl-\
		t.Fatal(err)
	}
	see("the lock table")
	see("thread A holds lock X waits for lock Y (held by B)")
	see("ended by Ctrl-\\ (SIGQUIT)")
	select {
	case err := <-waited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGQUIT {
			t.Fatalf("the process ended with %v, want killed by SIGQUIT", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Ctrl-\\ did not end the process")
	}
	mu.Lock()
	t.Logf("the terminal:\n%s", screen.String())
	mu.Unlock()
}
