package calibrate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"logjam/harness/report"
	"logjam/scenario"
)

// A replay of a sink's cell builds the user's file only when it hashes to
// the source the cell was played with: another file, a cell with no
// recorded source, or a file too big is bad input, before anything is
// compiled or run.
func TestAReplayOfASinkCellBuildsOnlyTheRecordedSource(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.cpp")
	if err := os.WriteFile(mine, []byte("// mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := &UserSink{Source: []byte("// another sink\n")}
	c := report.Cell{Name: "D1 sink=mine.cpp [stderr=buffered py=3.11.7]", Family: "sink",
		Cell: scenario.Cell{Scenario: "D1", Policy: "mine", Python: "3.11.7"},
		Sink: &report.SinkSource{File: "mine.cpp", SHA256: other.Digest()}}
	for name, tc := range map[string]struct {
		cell report.Cell
		file string
		want string
	}{
		"another source":   {c, mine, "not the same sink"},
		"no source record": {report.Cell{Name: c.Name, Family: "sink", Cell: c.Cell}, mine, "records no sink source"},
		"not a file":       {c, dir, "not a regular file"},
	} {
		var out bytes.Buffer
		if code := ReplaySink(&out, tc.cell, tc.file, 1); code != 2 || !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), "compiling") {
			t.Errorf("%s: exit %d, %q; want 2, naming %q, nothing compiled", name, code, out.String(), tc.want)
		}
	}
}
