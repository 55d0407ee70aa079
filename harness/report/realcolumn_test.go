package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"logjam/scenario"
	"logjam/verdict"
)

// realCell is a real-column cell as calibrate writes it: the model's
// verdict expected, the real one observed and in Real.
func realCell(id, policy, py string, sim, real verdict.Verdict) Cell {
	return Cell{ID: id, Name: id + " real [policy=" + policy + " stderr=buffered py=" + py + "]", Family: RealFamily,
		Cell: scenario.Cell{Scenario: id, Policy: policy, Platform: "linux", Python: py}, Expected: sim, Observed: real,
		Real: map[string]verdict.Verdict{py: real}}
}

func writeRealColumn(t *testing.T, dir string, m Matrix) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrix(filepath.Join(dir, CalibrationFile), m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The nightly's real columns (other OSes, newer interpreters) join the
// merged matrix as a family of their own: each real verdict beside the
// model's, a disagreement not as expected, and a folder that is not a real
// column's report refused whole, in one line, before anything is written.
func TestMergeJoinsTheRealColumns(t *testing.T) {
	base := t.TempDir()
	run, cells := nightlySample(filepath.Join(base, "whole"))
	dir := filepath.Join(base, "shard")
	r := run
	r.Shards = []string{"all"}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteAll(dir, r, cells); err != nil {
		t.Fatal(err)
	}
	macos := writeRealColumn(t, filepath.Join(base, "calibration-macos-py3.12"), Matrix{
		realCell("P4", "fd2", "3.12.9", verdict.Hang, verdict.Hang),
		realCell("T4", "logjam", "3.12.9", verdict.OK, verdict.OK)})
	py314 := writeRealColumn(t, filepath.Join(base, "calibration-linux-py3.14"), Matrix{
		realCell("T3", "fd2", "3.14.2", verdict.Misrouted, verdict.OK),
		realCell("RF1", "logjam", "3.14.2", verdict.OK, verdict.OK)})

	real, err := ReadRealColumns([]string{macos, py314})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "merged")
	_, got, err := Merge(out, []string{dir}, real)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cells)+4 {
		t.Fatalf("merged %d cells, want the run's %d and 4 real ones", len(got), len(cells))
	}
	back, err := ReadMatrix(filepath.Join(out, MatrixFile))
	if err != nil {
		t.Fatal(err)
	}
	if n, want := Count(Group(back)).Cells, Count(Group(cells)).Cells+4; n != want {
		t.Errorf("matrix.json holds %d cells, want %d", n, want)
	}
	md, err := os.ReadFile(filepath.Join(out, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| P4 py3.12.9 | HANG (real HANG) |", "| T3 py3.14.2 | **OK** (expected MISROUTED) (real OK) |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the merged matrix.md lacks %q:\n%s", want, md)
		}
	}
	if u := Matrix(real).Unexpected(); u != 1 {
		t.Errorf("%d real cells not as expected, want 1 (T3 under fd2: the model MISROUTED, real OK)", u)
	}

	bad := func(name string, m Matrix) string { return writeRealColumn(t, filepath.Join(base, name), m) }
	other := realCell("D1", "fd2", "3.13.9", verdict.OK, verdict.OK)
	other.Family = "deadlock"
	noReal := realCell("D1", "fd2", "3.13.9", verdict.OK, verdict.OK)
	noReal.Real = nil
	word := realCell("D1", "fd2", "3.13.9", verdict.OK, "WEDGED")
	version := realCell("D1", "fd2", "3.13.9", verdict.OK, verdict.OK)
	version.Real = map[string]verdict.Verdict{"$(reboot)": verdict.OK}
	row := realCell("Z9", "fd2", "3.13.9", verdict.OK, verdict.OK)
	for _, c := range []struct {
		why, want string
		dirs      []string
	}{
		{"a cell of another family", "not calibrate", []string{bad("fam", Matrix{other})}},
		{"a cell with no real verdict", "no real verdict", []string{bad("noreal", Matrix{noReal})}},
		{"a word outside the vocabulary", "not words of the vocabulary", []string{bad("word", Matrix{word})}},
		{"an interpreter that is no version", "is not a version", []string{bad("version", Matrix{version})}},
		{"a row of no matrix", "no row of the matrix", []string{bad("row", Matrix{row})}},
		{"a folder without a report", "is not a matrix", []string{base}},
		{"the same cell from two jobs", "in both", []string{macos, macos}},
	} {
		if _, err := ReadRealColumns(c.dirs); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: ReadRealColumns said %v, want one line with %q", c.why, err, c.want)
		}
	}
}
