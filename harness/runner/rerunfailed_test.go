package runner

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"logjam/harness/report"
	"logjam/verdict"
)

func cellOf(fam, name string, expected, observed verdict.Verdict) report.Cell {
	return report.Cell{Family: fam, Name: name, Expected: expected, Observed: observed}
}

// TestRerunFailedFocusesOnExactlyTheCellsNotAsExpected: the focus matches
// each cell not as expected and no other cell of the run, names with
// regular-expression characters included; their families only.
func TestRerunFailedFocusesOnExactlyTheCellsNotAsExpected(t *testing.T) {
	cells := report.Matrix{
		cellOf("deadlock", "D1 load-fails [policy=pystderr platform=linux py=3.12]", verdict.Hang, verdict.OK),
		cellOf("deadlock", "D1 load-fails [policy=logjam platform=linux py=3.12]", verdict.OK, verdict.OK),
		cellOf("pipes", "P1 a+b (x) [policy=logjam platform=linux py=3.12]", verdict.OK, verdict.Lost),
		cellOf("pipes", "P1 a+b (x) [policy=fd2 platform=linux py=3.12]", verdict.OK, verdict.OK),
		cellOf("signals", "I1 as expected [policy=logjam platform=linux py=3.12]", verdict.Hang, verdict.Hang),
	}
	only, focus, n, err := rerunSelection(cells, []string{"deadlock", "pipes", "signals"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || strings.Join(only, ",") != "deadlock,pipes" {
		t.Fatalf("%d cells of %v, want 2 of deadlock, pipes", n, only)
	}
	re := regexp.MustCompile(focus)
	for _, c := range cells {
		if got, want := re.MatchString(c.Name), !c.AsExpected(); got != want {
			t.Errorf("focus %q: matches %q: %v, want %v", focus, c.Name, got, want)
		}
	}
}

func TestRerunFailedRefusesWhatItCannotRun(t *testing.T) {
	fams := []string{"pipes"}
	if _, _, _, err := rerunSelection(report.Matrix{cellOf("pipes", "P1 x", verdict.OK, verdict.OK)}, fams); !errors.Is(err, errNothingToRerun) {
		t.Errorf("a green run: %v, want nothing to rerun", err)
	}
	_, _, _, err := rerunSelection(report.Matrix{cellOf("../../x\x1b[2J", "P1 x", verdict.OK, verdict.Lost)}, fams)
	if err == nil || !strings.Contains(err.Error(), "which this tree does not have") || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("a family this tree lacks: %v, want it refused, the name escaped", err)
	}
	var many report.Matrix
	for i := 0; i <= maxRerunCells; i++ {
		many = append(many, cellOf("pipes", "P1 x"+strings.Repeat("y", i), verdict.OK, verdict.Lost))
	}
	if _, _, _, err := rerunSelection(many, fams); err == nil || !strings.Contains(err.Error(), "rerun the whole matrix") {
		t.Errorf("%d cells: %v, want them refused", len(many), err)
	}
}

// TestRerunFailedReadsTheNewerRun: of reports/latest and
// reports/latest-focus, the run that started last.
func TestRerunFailedReadsTheNewerRun(t *testing.T) {
	reports := t.TempDir()
	if _, _, _, err := lastRun(reports); err == nil || !strings.Contains(err.Error(), "run logjam chaos first") {
		t.Fatalf("no run: %v", err)
	}
	now := time.Now()
	for i, p := range []string{LatestPointer, LatestFocusPointer} {
		dir := filepath.Join(reports, "runs", p)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		run := report.Run{Profile: "local", Seed: int64(10 + i), Started: now.Add(time.Duration(i) * time.Minute)}
		if err := report.WriteAll(dir, run, []report.Cell{cellOf("pipes", "P1 "+p, verdict.OK, verdict.Lost)}); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dir, filepath.Join(reports, p)); err != nil {
			t.Fatal(err)
		}
	}
	run, cells, _, err := lastRun(reports)
	if err != nil {
		t.Fatal(err)
	}
	if run.Seed != 11 || len(cells) != 1 || cells[0].Name != "P1 "+LatestFocusPointer {
		t.Errorf("read seed %d, cells %v: want the focus run's (seed 11)", run.Seed, cells)
	}
}
