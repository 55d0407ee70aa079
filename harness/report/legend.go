package report

import (
	"fmt"
	"slices"
	"strings"

	"logjam/internal/textout"
)

// Legend is what a newcomer needs to read the matrix, one line each: the
// columns, what an expected failure is, the row labels, the harness rows
// and the marks of a cell not as expected. The text matrix, matrix.md and
// matrix.html all print these lines (TestEveryReportCarriesTheLegend), so
// the three never explain the matrix differently.
var Legend = append(policyLegend[:len(policyLegend):len(policyLegend)],
	"old, initfast, norace, fixed (lazyinit): torch's lazy device init, oldest first; fixed must be OK",
	"an expected HANG, LOST, CRASH, ... under an older column is the ground truth: a documented failure the suite proves it detects",
	"a row's label: its scenario and what differs from linux, Python 3.12: @macos, py3.10, unbuffered (python -u), /cuda (a backend), +python-write-gil-dropped (a failpoint)",
	"harness rows H1-H6: the watchdog's negative controls; their HANG, NOMARKER, FAILED, CRASH and ERROR are expected",
	"not as expected: !OBSERVED/EXPECTED; !VERDICT+check (another check of the spec failed); !FAIL (a spec outside any cell); each summed up at the end",
)

// policyLegend is a line per built-in policy, the log path's history.
var policyLegend = []string{
	"pystderr: the original sink (pybind11's pythonbuf): every line a strict Python write to sys.stderr",
	"fd2: review round 1: every line a direct write(2) to fd 2, no room check",
	"buffered: review round 2: a call's lines kept, flushed to sys.stderr as the outermost call returns",
	"adaptive: review round 3: direct while fd 2 has room (sys.stderr the original), else kept until the call's exit",
	"merged: the PR as merged: adaptive with four fixes (daemons, fatal lines, escaping, macOS pipes)",
	"logjam: ours; every logjam cell must be OK",
}

// SinkLegend is the legend of a run of logjam calibrate -sink: the user's
// column, each built-in policy beside it and what its verdicts are, the
// row labels and the marks. sink is the sink's column, file its file.
func SinkLegend(sink, file string) []string {
	l := []string{fmt.Sprintf("%s: your sink (%s) built into the calibration's extension and played on real CPython; a correct sink is OK in every cell (docs/CONTRACT.md), so any other verdict is not as expected", sink, file)}
	l = append(l, policyLegend...)
	return append(l,
		"the built-in columns: the model's cell of each policy on the same row, Python and buffering, played at the end of this run for comparison (the real column agrees with the model on these rows); their HANG, LOST, ... are the older policies' documented failures, never this run's",
		"a row's label: its scenario (docs/SCENARIOS.md), the Python it ran on, unbuffered when sys.stderr was opened as under python -u",
		"not as expected: !OBSERVED/OK; FLAKY(...) when the plays of -repeat N disagree; each summed up at the end with its reason, its evidence bundle (logjam replay -sink) and its rerun",
	)
}

// LegendOf is the legend for a matrix: SinkLegend when every cell is a
// sink's (the first one's column and file, neutralised: a matrix may be
// someone else's), else Legend.
func LegendOf(cells []Cell) []string {
	if len(cells) == 0 {
		return Legend
	}
	for _, c := range cells {
		if c.Family != "sink" {
			return Legend
		}
	}
	file := cells[0].Column() + ".cpp"
	if s := cells[0].Sink; s != nil {
		file = s.File
	}
	return SinkLegend(clipLine(cells[0].Column()), clipLine(file))
}

// sinkOf is the sink a matrix of logjam calibrate -sink was played with
// (its first cell's), or nil when a cell is not a sink's.
func sinkOf(cells []Cell) *SinkSource {
	if len(cells) == 0 {
		return nil
	}
	for _, c := range cells {
		if c.Family != "sink" || c.Sink == nil {
			return nil
		}
	}
	return cells[0].Sink
}

// pythonsOf are the Pythons the cells ran on, in order of appearance.
func pythonsOf(cells []Cell) []string {
	var ps []string
	for _, c := range cells {
		if !slices.Contains(ps, c.Python) {
			ps = append(ps, c.Python)
		}
	}
	return ps
}

// cellsOf is every row's first run (its cell, for what the legend and
// the title need).
func cellsOf(fams []Family) []Cell {
	var cs []Cell
	for _, f := range fams {
		for _, r := range f.Rows {
			cs = append(cs, r.Cell)
		}
	}
	return cs
}

// clipLine is a foreign string made one safe line of at most 200 bytes.
func clipLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return textout.Terminal(s)
}
