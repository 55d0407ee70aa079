package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/internal/testkit"
	"logjam/scenario"
	"logjam/verdict"
)

// `logjam replay -n N` fails (status 1) when only some replays differ
// from the recorded verdict, not only when all do. The bundle's child is a
// stand-in kept by its digest like any child: every other run it is the
// real simrt, in between it exits 0 at once (another verdict).
func TestReplayFailsWhenOnlySomeReplaysDiffer(t *testing.T) {
	prof := replaySetup(t, "needs Linux")
	tmp := t.TempDir()
	real := testkit.Child(t)
	counter := filepath.Join(tmp, "runs")
	standIn := filepath.Join(tmp, "stand-in")
	script := fmt.Sprintf("#!/bin/sh\nn=$(cat %[1]q 2>/dev/null || echo 0)\necho $((n+1)) > %[1]q\n[ $((n %% 2)) -eq 0 ] && exec %[2]q \"$@\"\nexit 0\n", counter, real)
	if err := os.WriteFile(standIn, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	spec := cell.Spec{Cell: scenario.Cell{Scenario: "D1", Policy: "logjam", Platform: "linux", Python: "3.12"}}
	out, err := cell.Run(context.Background(), real, spec, prof)
	if err != nil || out.Observed != verdict.OK {
		t.Fatalf("D1 under logjam: %v, %v", out.Observed, err)
	}
	row := report.Cell{ID: "D1", Name: "deadlock D1 logjam", Family: "deadlock", Cell: spec.Cell,
		Expected: verdict.Hang, Observed: out.Observed, Evidence: report.Evidence{Reason: out.Reason, Command: out.Command}}
	b, err := out.Bundle(row, spec, prof, standIn)
	if err != nil {
		t.Fatal(err)
	}
	dir := report.BundleDir(tmp, row.Name)
	if err := report.WriteBundle(dir, b); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(counter); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}

	var w strings.Builder
	code := Main([]string{"replay", "-n", "4", dir}, &w)
	if code != 1 || !strings.Contains(w.String(), "4 replays, 2 observed the recorded verdict, 2 did not") {
		t.Fatalf("replay -n 4 with 2 replays differing: status %d, want 1\n%s", code, w.String())
	}
	// The stand-in alone, replayed once (its first run is simrt): the same.
	_ = os.Remove(counter)
	w.Reset()
	if code := Main([]string{"replay", dir}, &w); code != 0 {
		t.Fatalf("replay of a run that agrees: status %d\n%s", code, w.String())
	}
}
