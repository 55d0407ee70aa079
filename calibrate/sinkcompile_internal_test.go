package calibrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"logjam/harness/report"
	"logjam/scenario"
	"logjam/verdict"
)

// A user's sink that does not compile is bad input: exit status 2 at once
// (no row played), the compiler's errors naming the user's own file, not
// the copy in the build folder.
func TestASinkThatDoesNotCompileIsBadInput(t *testing.T) {
	if _, err := Compiler(); err != nil {
		t.Skip("no C++ compiler (g++ or $CXX)")
	}
	var py string
	for _, in := range Discover() {
		if in.Missing == "" {
			py = in.Version
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with its headers")
	}
	t.Setenv("LOGJAM_CALIBRATE_CACHE", t.TempDir())
	sink := filepath.Join(t.TempDir(), "mine.cpp")
	if err := os.WriteFile(sink, []byte("#include \"logjam/logjam.hpp\"\nstruct Mine : logjam::Sink { int x = ; };\nlogjam::Sink *logjam_make_sink() { return nullptr; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	code := Command([]string{"-sink", sink, "-py", py, "-rows", "C1", "-out", t.TempDir()}, &out)
	if code != 2 {
		t.Errorf("status %d, want 2:\n%s", code, out.String())
	}
	for _, want := range []string{sink + " does not compile", sink + ":2:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "user_sink.cpp") || strings.Contains(out.String(), "row  python") {
		t.Errorf("the build folder's copy named, or a row played:\n%s", out.String())
	}
}

// A sink's cell whose plays (-repeat) came out differently is named FLAKY
// with its counts; one whose verdict differs by interpreter is named too;
// the matrix is written.
func TestASinksRowsThatDifferAreNamed(t *testing.T) {
	cell := func(py string, r int, v verdict.Verdict) report.Cell {
		return report.Cell{ID: "D1", Name: "D1 sink=mine.cpp [stderr=buffered py=" + py + "]", Family: "sink", Repeat: r,
			Cell: scenario.Cell{Scenario: "D1", Policy: "mine", Python: py}, Expected: verdict.OK, Observed: v}
	}
	cells := []report.Cell{cell("3.12.1", 1, verdict.OK), cell("3.12.1", 2, verdict.Hang), cell("3.12.1", 3, verdict.OK), cell("3.13.0", 1, verdict.OK)}
	out := t.TempDir()
	var w strings.Builder
	if code := summarize(&w, out, "mine", cells, time.Second); code != 1 {
		t.Errorf("status %d with a HANG, want 1", code)
	}
	for _, want := range []string{"FLAKY D1 sink=mine.cpp [stderr=buffered py=3.12.1]: HANG 1, OK 2 of its plays", "D1 differs by interpreter or buffering"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("no %q in:\n%s", want, w.String())
		}
	}
	if _, err := os.Stat(filepath.Join(out, report.MatrixFile)); err != nil {
		t.Errorf("no matrix: %v", err)
	}
}
