package calibrate

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
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
	var out, errs strings.Builder
	setErrOut(t, &errs)
	code := Command([]string{"-sink", sink, "-py", py, "-rows", "C1", "-out", t.TempDir()}, &out)
	if code != 2 {
		t.Errorf("status %d, want 2:\n%s%s", code, out.String(), errs.String())
	}
	for _, want := range []string{sink + " does not compile", sink + ":2:"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("no %q on stderr:\n%s", want, errs.String())
		}
	}
	// The first line alone says where: the user's file, line and column.
	first, _, _ := strings.Cut(errs.String(), "\n")
	if !regexp.MustCompile(`^logjam calibrate: \S+/mine\.cpp does not compile \(python [0-9.]+\): \S+/mine\.cpp:2:\d+: error: `).MatchString(first) {
		t.Errorf("the first line does not name the error's file and line: %q", first)
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

// A sink run ends as a chaos run does: its grid with the built-in
// policies' columns beside the sink's, the legend, each cell not OK summed
// up once with its replay line, then the built-in policy it behaves most
// like, where it differs grouped by row and pair of verdicts; a cell's
// progress line names its count and keeps its reason to one short line.
func TestASinkRunEndsWithItsMatrixBesideTheBuiltInsAndItsSummary(t *testing.T) {
	builtIn := map[string]verdict.Verdict{"pystderr": verdict.Hang, "fd2": verdict.OK, "buffered": verdict.OK, "adaptive": verdict.OK, "merged": verdict.OK, "logjam": verdict.OK}
	cell := func(py, buf string, v verdict.Verdict) report.Cell {
		name := "D3 sink=mine.cpp [stderr=" + BufferingName(buf) + " py=" + py + "]"
		return report.Cell{ID: "D3", Name: name, Family: "sink", Cell: scenario.Cell{Scenario: "D3", Policy: "mine", Python: py, Buffering: buf},
			Expected: verdict.OK, Observed: v, Beside: builtIn, Bundle: "/r/evidence/" + strings.ReplaceAll(name, " ", "_"),
			Sink: &report.SinkSource{File: "mine.cpp", SHA256: strings.Repeat("0", 64), Path: "/src/mine.cpp"}, Evidence: report.Evidence{Reason: "killed by SIGABRT (signal 6)"}}
	}
	cells := []report.Cell{cell("3.11.7", Buffered, verdict.Crash), cell("3.11.7", Unbuffered, verdict.Crash), cell("3.12.1", Buffered, verdict.Crash)}
	var w strings.Builder
	if code := summarize(&w, t.TempDir(), "mine", cells, time.Second); code != 1 {
		t.Errorf("status %d with a CRASH, want 1", code)
	}
	out := w.String()
	for _, want := range []string{
		"3 not as expected:\n",
		"  evidence: ./logjam replay -sink /src/mine.cpp /r/evidence/D3_sink=mine.cpp_[stderr=buffered_py=3.11.7]\n",
		"legend:\n  mine: your sink (mine.cpp)",
		"mine behaves like pystderr except on D3 on 3 cells: CRASH where pystderr is HANG\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^id +mine +pystderr +fd2 +buffered +adaptive +merged +logjam *$`).MatchString(out) {
		t.Errorf("the grid's columns are not the sink's, then the built-in policies':\n%s", out)
	}
	line := progressLine(7, 120, SinkCell{Row: "P6", Python: "3.11.7", Buffering: "unbuffered", Verdict: verdict.Hang, Reason: strings.Repeat("waits for room ", 20)})
	if !strings.HasPrefix(line, "[  7/120] P6   3.11.7   unbuffered HANG      waits for room") || len(line) > 160 || strings.Contains(line, "\n") {
		t.Errorf("the progress line: %q", line)
	}
}

// setErrOut sends what Command says of bad input to w for the test.
func setErrOut(t *testing.T, w io.Writer) {
	old := errOut
	errOut = w
	t.Cleanup(func() { errOut = old })
}

// A CRASH's reason carries what CPython said as it ended the process (the
// debug allocator names a sink that allocates without the GIL), read from
// the child's fd 2; a message the crash cut off, or none, adds nothing.
func TestACrashsReasonCarriesCPythonsFatalError(t *testing.T) {
	fd2 := []byte("line 1\nFatal Python error: _PyMem_DebugMalloc: Python memory allocator called without holding the GIL\nPython runtime state: initialized\n")
	if got, want := pythonFatal(fd2), "; CPython: Fatal Python error: _PyMem_DebugMalloc: Python memory allocator called without holding the GIL"; got != want {
		t.Errorf("pythonFatal = %q, want %q", got, want)
	}
	for _, none := range []string{"", "line 1\n", "Fatal Python error: \n", "Fatal Python error: "} {
		if got := pythonFatal([]byte(none)); got != "" {
			t.Errorf("pythonFatal(%q) = %q, want nothing", none, got)
		}
	}
	if got := pythonFatal([]byte("Fatal Python error: \x1b[31mred\x1b[0m")); strings.Contains(got, "\x1b") {
		t.Errorf("an escape from the child reached the reason: %q", got)
	}
}
