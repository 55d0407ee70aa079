package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"logjam/internal/childbin"
)

// logjam test speaks before the go command does, passes go test's output
// and exit status on, speaks again during a silence, and stops go test on
// Ctrl-C with 130.
func TestLogjamTestSpeaksAndKeepsTheStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs go test")
	}
	run := func(ctx context.Context, quiet time.Duration, pkg string, env ...string) (int, string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := childbin.GoCommand(ctx, "test", "-count=1", pkg)
		cmd.Env = append(cmd.Environ(), env...)
		rc := runQuietly(ctx, cmd, "go test "+pkg, quiet, &out, &errOut)
		return rc, out.String(), errOut.String()
	}
	t.Run("a failing package: 1, its output passed on", func(t *testing.T) {
		rc, out, errOut := run(t.Context(), time.Hour, "./testdata/gotest/fails")
		if rc != 1 || !strings.Contains(out, "planted failure") || !strings.HasPrefix(errOut, "logjam test: go test ./testdata/gotest/fails: ") {
			t.Fatalf("rc %d, stdout %q, stderr %q", rc, out, errOut)
		}
	})
	t.Run("a passing package after a silence: 0, and a line during the silence", func(t *testing.T) {
		rc, out, errOut := run(t.Context(), 300*time.Millisecond, "./testdata/gotest/passes", "LOGJAM_GOTEST_QUIET=2s")
		if rc != 0 || !strings.Contains(out, "ok ") || !strings.Contains(errOut, "is still compiling or running") {
			t.Fatalf("rc %d, stdout %q, stderr %q", rc, out, errOut)
		}
	})
	t.Run("Ctrl-C: 130", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel) // a deadline for the run, not an interleaving
		rc, _, errOut := run(ctx, time.Hour, "./testdata/gotest/passes", "LOGJAM_GOTEST_QUIET=10m")
		if rc != 130 || !strings.Contains(errOut, "interrupted") {
			t.Fatalf("rc %d, stderr %q", rc, errOut)
		}
	})
}
