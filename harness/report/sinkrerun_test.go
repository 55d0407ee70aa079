package report

import (
	"strings"
	"testing"

	"logjam/scenario"
)

// A sink cell's rerun is the calibrate command that plays it again, built
// from its validated fields; a field that does not validate is never
// printed (the file name becomes SINK.cpp, the rest gives no command).
func TestASinkCellsRerunIsBuiltFromValidatedFields(t *testing.T) {
	c := Cell{Family: "sink", Cell: scenario.Cell{Scenario: "D1", Policy: "my_sink", Python: "3.11.7", Buffering: "unbuffered"}}
	if got, want := RerunOf(c), "./logjam calibrate -sink my_sink.cpp -rows D1 -py 3.11.7 -buffering unbuffered"; got != want {
		t.Fatalf("RerunOf = %q, want %q", got, want)
	}
	c.Cell.Buffering = ""
	if got := RerunOf(c); !strings.HasSuffix(got, "-buffering buffered") {
		t.Fatalf("the buffered buffering is not named: %q", got)
	}
	c.Cell.Policy = "x; rm -rf ~ #"
	if got := RerunOf(c); !strings.Contains(got, "-sink SINK.cpp ") || strings.Contains(got, "rm") {
		t.Fatalf("a sink name that does not validate reached the command: %q", got)
	}
	for _, bad := range []scenario.Cell{
		{Scenario: "D1; x", Policy: "s", Python: "3.11.7"},
		{Scenario: "D1", Policy: "s", Python: "3.11.7$(id)"},
		{Scenario: "D1", Policy: "s", Python: "3.11.7", Buffering: "raw"},
	} {
		if got := RerunOf(Cell{Family: "sink", Cell: bad}); got != "" {
			t.Errorf("%+v: a rerun from fields that do not validate: %q", bad, got)
		}
	}
}

// A sink cell's commands name the sink's file by the absolute path it was
// read from, so that they run as printed from anywhere, but only a path
// that is a plain shell word, clean, absolute and ending in the recorded
// file.
func TestASinkCellsCommandsNameItsPathOnlyWhenItValidates(t *testing.T) {
	c := Cell{Family: "sink", Cell: scenario.Cell{Scenario: "F1", Policy: "mine", Python: "3.12.1", Buffering: "buffered"},
		Bundle: "/home/me/logjam/reports/runs/20261206-1200-sink-mine/evidence/F1_sink=mine.cpp_stderr=buffered_py=3.12.1",
		Sink:   &SinkSource{File: "mine.cpp", SHA256: strings.Repeat("ab", 32), Path: "/home/me/binding/sinks/mine.cpp"}}
	if got, want := RerunOf(c), "./logjam calibrate -sink /home/me/binding/sinks/mine.cpp -rows F1 -py 3.12.1 -buffering buffered"; got != want {
		t.Fatalf("RerunOf = %q, want %q", got, want)
	}
	if got, want := SinkReplay(c), "./logjam replay -sink /home/me/binding/sinks/mine.cpp "+c.Bundle; got != want {
		t.Fatalf("SinkReplay = %q, want %q", got, want)
	}
	for _, p := range []string{"relative/mine.cpp", "/a/../etc/mine.cpp", "/a b/mine.cpp", "/a/$(id)/mine.cpp", "/a/other.cpp", "/a/mine.cpp;id", "-x/mine.cpp"} {
		d := c
		d.Sink = &SinkSource{File: "mine.cpp", SHA256: c.Sink.SHA256, Path: p}
		if got := SinkPath(d); got != "mine.cpp" {
			t.Errorf("path %q: the commands name %q, want the base name", p, got)
		}
	}
}
