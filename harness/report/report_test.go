package report

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"logjam/scenario"
	"logjam/telemetry"
)

func sample() Matrix {
	return Matrix{
		{ID: "D1", Family: "deadlock", Cell: scenario.Cell{Scenario: "D1", Policy: "logjam"}, Expected: "OK", Observed: "OK", Rerun: "r1"},
		{ID: "D1", Name: "D1 x [policy=pystderr]", Family: "deadlock", Cell: scenario.Cell{Scenario: "D1", Policy: "pystderr"}, Expected: "HANG", Observed: "OK", Rerun: Rerun("deadlock", "D1 x [policy=pystderr]", "local", 7, "")},
		{ID: "C1", Family: "capture", Cell: scenario.Cell{Scenario: "C1", Policy: "fd2"}, Expected: "MISROUTED", Observed: "MISROUTED"},
	}
}

func TestMatrixRoundTripAndRender(t *testing.T) {
	m := sample()
	m.Sort()
	if m[0].Family != "capture" {
		t.Fatalf("not sorted by family: %v", m[0])
	}
	path := filepath.Join(t.TempDir(), "matrix.json")
	if err := WriteMatrix(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadMatrix(path)
	if err != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("read back %v, %v", back, err)
	}
	var b strings.Builder
	if bad := RenderText(&b, m); bad != 1 || m.Unexpected() != 1 {
		t.Fatalf("unexpected cells: %d", bad)
	}
	out := b.String()
	if !strings.Contains(out, "!OK/HANG") || !strings.Contains(out, "rerun: "+Rerun("deadlock", "D1 x [policy=pystderr]", "local", 7, "")+"\n") ||
		strings.Index(out, "pystderr") > strings.Index(out, "logjam") {
		t.Fatalf("render:\n%s", out)
	}
}

func TestBundleRoundTrip(t *testing.T) {
	ev, _ := telemetry.Parse([]byte(`{"ev":"exit","t":1,"code":0}`))
	b := Bundle{Cell: sample()[1], Stdout: []byte("done\n"), FD2: []byte("E x\n"), Events: []telemetry.Event{ev},
		Replay: sampleReplay()}
	dir := BundleDir(t.TempDir(), "D1 slug [policy=pystderr]")
	if err := WriteBundle(dir, b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadBundle(dir)
	if err != nil || !reflect.DeepEqual(back.Cell, b.Cell) || string(back.FD2) != "E x\n" || len(back.Events) != 1 || back.Events[0].Ev != "exit" ||
		!reflect.DeepEqual(back.Replay, b.Replay) {
		t.Fatalf("read back %+v, %v", back, err)
	}
}

// A cell whose run could not start is an ERROR row that counts as not as
// expected: an errored run never leaves the matrix smaller.
func TestAnErroredCellIsARowAndCountsAsUnexpected(t *testing.T) {
	m := Matrix{
		{ID: "D1", Family: "deadlock", Cell: scenario.Cell{Scenario: "D1", Policy: "logjam"}, Expected: "OK", Observed: "ERROR", Rerun: "r1",
			Evidence: Evidence{Reason: "the run could not start: watchdog: Config.Deadline must be positive"}},
		{ID: "H5", Family: "harness", Cell: scenario.Cell{Scenario: "H5"}, Failpoints: "logjam/no-such-point=return(1)", Expected: "ERROR", Observed: "ERROR"},
	}
	var b strings.Builder
	if bad := RenderText(&b, m); bad != 1 || m.Unexpected() != 1 {
		t.Fatalf("unexpected cells: %d, want 1\n%s", bad, b.String())
	}
	out := b.String()
	for _, want := range []string{"!ERROR/OK", "2 cells, 1 as expected, 1 not", "H5 +no-such-point"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
}
