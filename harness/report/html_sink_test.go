package report

import (
	"strings"
	"testing"
	"time"

	"logjam/scenario"
	"logjam/verdict"
)

// sinkSample is a user's sink run as `logjam calibrate -sink` writes it
// (calibrate/sinkcmd.go): family "sink", the sink's name as the policy,
// real interpreters and bufferings, a real HANG with its named cycle, a
// cell whose two plays disagree.
func sinkSample() (Run, []Cell) {
	run := Run{ID: "sink-mine", Profile: "real", Mode: "real", Shards: []string{"all"},
		Started: time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC), Seconds: 42}
	mk := func(id, py, buf string, obs verdict.Verdict, rep int) Cell {
		name := id + " sink=mine.cpp [stderr=" + buf + " py=" + py + "]"
		c := Cell{ID: id, Name: name, Family: "sink", Repeat: rep,
			Cell:     scenario.Cell{Scenario: id, Policy: "mine", Platform: scenario.DefaultPlatform, Python: py},
			Expected: verdict.OK, Observed: obs,
			Real:     map[string]verdict.Verdict{py: obs},
			Evidence: Evidence{Reason: "exited with status 0"},
			Rerun:    SinkRerun("mine.cpp", id, py, buf),
			Sink:     &SinkSource{File: "mine.cpp", SHA256: strings.Repeat("ab", 32)}}
		if obs == verdict.Hang {
			c.Evidence.Cycle = "thread MainThread holds the GIL and waits for mine's lock (held by T1), which waits for the GIL"
		}
		return c
	}
	cells := []Cell{
		mk("D1", "3.11.7", "buffered", verdict.Hang, 1), mk("D1", "3.11.7", "buffered", verdict.Hang, 2),
		mk("D1", "3.12.1", "unbuffered", verdict.OK, 1), mk("D1", "3.12.1", "unbuffered", verdict.Hang, 2),
		mk("F1", "3.11.7", "buffered", verdict.Lost, 1), mk("F1", "3.11.7", "buffered", verdict.Lost, 2),
	}
	return run, cells
}

// The HTML of a sink run loads in headless Chromium, as a chaos run's
// does: every cell shown, the real HANG's cycle, the rerun and the replay
// of a sink cell, the cell whose plays disagree marked FLAKY, the six
// built-in policies' verdicts beside each row and none of them counted as
// a cell.
func TestASinkRunsHTMLLoadsInHeadlessChromium(t *testing.T) {
	dir := t.TempDir()
	run, cells := besideSample()
	fams := Group(cells)
	dom, shown := renderInBrowser(t, run, fams, dir)
	expectEveryCellShown(t, fams, shown)
	if len(shown) != 3 {
		t.Errorf("the DOM shows %d cells; the sink run has 3", len(shown))
	}
	if n := strings.Count(dom, `<td class="beside `); n != 3*6 {
		t.Errorf("the DOM shows %d built-in verdicts beside the sink's, want 3 rows x 6 policies", n)
	}
	for _, want := range []string{`data-verdict="FLAKY"`, "waits for mine's lock (held by T1)", "./logjam calibrate -sink /home/me/binding/mine.cpp -rows D1 -py 3.11.7 -buffering buffered",
		"./logjam replay -sink /home/me/binding/mine.cpp /home/me/logjam/reports/runs/r/evidence/F1_sink=mine.cpp_stderr=buffered_py=3.11.7"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
}
