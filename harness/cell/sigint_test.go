package cell_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"testing"

	"logjam/harness/cell"
	"logjam/internal/axes"
	"logjam/internal/testkit"
	"logjam/scenario"
)

// helperEnv asks this test binary, run again, to play the caller of cells.
const helperEnv = "LOGJAM_CELL_SIGINT_HELPER"

// TestCallerSIGINTDispositionDoesNotReachTheChild runs I2 (a real SIGINT
// to a child blocked on its fd-2 pipe) under every policy from two callers,
// one with SIGINT ignored and one with it at its default: the verdicts must
// be the same, since the child's disposition at start is its contract's.
func TestCallerSIGINTDispositionDoesNotReachTheChild(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("the helper run plays the caller (TestHelperRunsI2)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux: I2's one-page pipe")
	}
	bin := testkit.Child(t)
	caller := func(trap string) map[string]string {
		// The shell sets the disposition, and exec keeps an ignored one.
		cmd := exec.Command("sh", "-c", trap+`; exec "$0" -test.run='^TestHelperRunsI2$' -test.v`, os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"="+bin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("caller (%s): %v\n%s", trap, err, out)
		}
		var got map[string]string
		for _, line := range splitLines(out) {
			if json.Unmarshal(line, &got) == nil && got != nil {
				return got
			}
		}
		t.Fatalf("caller (%s) printed no verdicts:\n%s", trap, out)
		return nil
	}
	ignoring, defaulting := caller(`trap "" INT`), caller(`trap - INT`)
	if ignoring["caller"] != "SIGINT ignored" || defaulting["caller"] != "SIGINT default" {
		t.Fatalf("the callers' dispositions were not the ones asked for: %q, %q", ignoring["caller"], defaulting["caller"])
	}
	for _, p := range axes.Policies {
		if ignoring[p] != defaulting[p] {
			t.Errorf("I2 under %s: %s from a caller ignoring SIGINT, %s from one that does not", p, ignoring[p], defaulting[p])
		}
	}
	if ignoring["fd2"] == "" {
		t.Fatalf("no verdicts: %v", ignoring)
	}
}

// TestHelperRunsI2 is the caller's side: it prints its own disposition and
// the I2 verdict of every policy as one JSON line.
func TestHelperRunsI2(t *testing.T) {
	bin := os.Getenv(helperEnv)
	if bin == "" {
		t.Skip("run by TestCallerSIGINTDispositionDoesNotReachTheChild")
	}
	got := map[string]string{"caller": "SIGINT default"}
	if signal.Ignored(syscall.SIGINT) {
		got["caller"] = "SIGINT ignored"
	}
	for _, p := range axes.Policies {
		out, err := cell.Run(context.Background(), bin, cell.Spec{Cell: scenario.Cell{Scenario: "I2", Policy: p, Platform: "linux", Python: "3.12"}}, profile)
		if err != nil {
			t.Fatalf("I2 under %s: %v", p, err)
		}
		got[p] = string(out.Observed)
	}
	b, _ := json.Marshal(got)
	fmt.Println(string(b))
}

func splitLines(b []byte) [][]byte {
	var lines [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			lines = append(lines, b[start:i])
			start = i + 1
		}
	}
	return append(lines, b[start:])
}
