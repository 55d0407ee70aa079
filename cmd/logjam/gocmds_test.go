package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"logjam/internal/childbin"
)

// logjam test (and ginkgo, simrt: the same speak) speaks before the go
// command does, passes its output and exit status on, speaks again during
// a silence, and on Ctrl-C kills it and returns 130.
func TestTheGoCommandSpeaksAndKeepsTheStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs go test")
	}
	run := func(sig chan os.Signal, quiet time.Duration, pkg string, env ...string) (int, string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := childbin.GoCommand(context.Background(), "test", "-count=1", pkg)
		cmd.Env = append(cmd.Environ(), env...)
		rc := speak(cmd, sig, "go test "+pkg, "compiling", quiet, &out, &errOut)
		return rc, out.String(), errOut.String()
	}
	t.Run("a failing package: 1, its output passed on", func(t *testing.T) {
		rc, out, errOut := run(nil, time.Hour, "./testdata/gotest/fails")
		if rc != 1 || !strings.Contains(out, "planted failure") || !strings.HasPrefix(errOut, "logjam: go test ./testdata/gotest/fails: compiling\n") {
			t.Fatalf("rc %d, stdout %q, stderr %q", rc, out, errOut)
		}
	})
	t.Run("a passing package after a silence: 0, and a line during the silence", func(t *testing.T) {
		rc, out, errOut := run(nil, 300*time.Millisecond, "./testdata/gotest/passes", "LOGJAM_GOTEST_QUIET=2s")
		if rc != 0 || !strings.Contains(out, "ok ") || !strings.Contains(errOut, "is still compiling or running") {
			t.Fatalf("rc %d, stdout %q, stderr %q", rc, out, errOut)
		}
	})
	t.Run("Ctrl-C: 130", func(t *testing.T) {
		sig := make(chan os.Signal, 1)
		time.AfterFunc(time.Second, func() { sig <- syscall.SIGINT }) // a deadline for the run, not an interleaving
		rc, _, errOut := run(sig, time.Hour, "./testdata/gotest/passes", "LOGJAM_GOTEST_QUIET=10m")
		if rc != 130 || !strings.Contains(errOut, "interrupted") {
			t.Fatalf("rc %d, stderr %q", rc, errOut)
		}
	})
}

// ./logjam simrt becomes the child: its exit status at its deadline (124)
// reaches the caller, as the README says (`go run` would give 1).
func TestLogjamSimrtKeepsTheChildsStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the child")
	}
	cmd := exec.Command("sh", "-c", "exec ./logjam simrt -deadline 2s -scenario D1 -policy pystderr")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 124 || !strings.Contains(string(out), "(exit status 124)") {
		t.Fatalf("want exit status 124, got %v\n%s", err, out)
	}
}
