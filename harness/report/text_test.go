package report

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"logjam/internal/textout"
	"logjam/scenario"
	"logjam/verdict"
)

// A cell not as expected shows, under its line, why (the reason), the
// cycle when one formed, and the command that replays its bundle; one as
// expected shows none of them.
func TestAFailingCellShowsItsEvidence(t *testing.T) {
	bad := Cell{ID: "D3", Name: "D3 x [policy=pystderr]", Family: "deadlock", Entry: "suites/deadlock/deadlock_test.go:27",
		Expected: verdict.OK, Observed: verdict.Hang, Bundle: "reports/latest/evidence/D3_x",
		Evidence: Evidence{Reason: "reported a wait-for cycle after 54ms", Cycle: "thread MainThread holds the GIL and waits for the end of thread W0"}}
	good := bad
	good.ID, good.Name, good.Expected = "D4", "D4 y [policy=pystderr]", verdict.Hang
	var w strings.Builder
	RenderText(&w, Matrix{bad, good})
	out := w.String()
	for _, want := range []string{
		"expected OK, observed HANG\n  reason: reported a wait-for cycle after 54ms\n  cycle: thread MainThread holds the GIL and waits for the end of thread W0\n  evidence: ./logjam replay reports/latest/evidence/D3_x\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Count(out, "reason:") != 1 {
		t.Errorf("a cell as expected showed its evidence:\n%s", out)
	}
}

// greenMatrix is a run where every cell came out as expected: an OK, an
// expected HANG under an older policy, and a harness row's expected ERROR.
func greenMatrix() Matrix {
	return Matrix{
		{ID: "D1", Name: "D1 a [policy=logjam]", Family: "deadlock", Cell: scenario.Cell{Policy: "logjam"}, Expected: verdict.OK, Observed: verdict.OK},
		{ID: "D1", Name: "D1 a [policy=pystderr]", Family: "deadlock", Cell: scenario.Cell{Policy: "pystderr"}, Expected: verdict.Hang, Observed: verdict.Hang},
		{ID: "H5", Name: "H5 refused", Family: "harness", Expected: verdict.Error, Observed: verdict.Error},
	}
}

// The legend is printed on every run, a green one too (a newcomer reads
// an expected HANG there first), and matrix.md and matrix.html carry the
// same lines.
func TestEveryReportCarriesTheLegend(t *testing.T) {
	m := greenMatrix()
	var w strings.Builder
	if bad := RenderText(&w, m); bad != 0 {
		t.Fatalf("%d cells not as expected in a green run", bad)
	}
	out := w.String()
	if !strings.Contains(out, "\nlegend:\n") {
		t.Errorf("a green run prints no legend:\n%s", out)
	}
	for _, l := range Legend {
		if !strings.Contains(out, "\n  "+l+"\n") {
			t.Errorf("the text legend lacks %q:\n%s", l, out)
		}
	}
	if regexp.MustCompile(`\n\d+ not as expected:\n`).MatchString(out) {
		t.Errorf("a green run prints a summary of failures:\n%s", out)
	}
	md := string(Markdown(Run{ID: "r", Shards: []string{"all"}}, Group(m)))
	page, err := HTML(Run{ID: "r", Shards: []string{"all"}}, Group(m), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range Legend {
		if !strings.Contains(md, "- "+textout.MarkdownCell(l)+"\n") {
			t.Errorf("matrix.md lacks the legend line %q", l)
		}
		if !strings.Contains(html.UnescapeString(string(page)), "<li>"+l+"</li>") {
			t.Errorf("matrix.html lacks the legend line %q", l)
		}
	}
}

// A cell not as expected is summed up once after the matrix: its Entry's
// line and name, expected and observed, its reason, its bundle and its
// rerun command, each once, and its name in no other line after the grid.
func TestAFailingCellsSummaryCarriesItsBundleAndRerun(t *testing.T) {
	m := greenMatrix()
	bad := Cell{ID: "P5", Name: "P5 stalled [policy=logjam]", Family: "pipes", Cell: scenario.Cell{Policy: "logjam"}, Entry: "suites/pipes/pipes_test.go:40",
		Expected: verdict.OK, Observed: verdict.Lost, Bundle: "reports/runs/x/evidence/P5-logjam", Rerun: Rerun("pipes", "P5 stalled [policy=logjam]", "local", 7, ""),
		Evidence: Evidence{Reason: "lost 1 line: #3 E boom"}}
	m = append(m, bad)
	var w strings.Builder
	if n := RenderText(&w, m); n != 1 {
		t.Fatalf("%d cells not as expected, want 1", n)
	}
	out := w.String()
	_, summary, ok := strings.Cut(out, "\n1 not as expected:\n")
	if !ok {
		t.Fatalf("no summary of the failing cell:\n%s", out)
	}
	want := "suites/pipes/pipes_test.go:40: pipes P5 stalled [policy=logjam]: expected OK, observed LOST\n" +
		"  reason: lost 1 line: #3 E boom\n" +
		"  evidence: ./logjam replay reports/runs/x/evidence/P5-logjam\n" +
		"  rerun: " + Rerun("pipes", "P5 stalled [policy=logjam]", "local", 7, "") + "\n"
	if summary != want {
		t.Errorf("the summary:\n%s\nwant:\n%s", summary, want)
	}
	if n := strings.Count(out, "P5 stalled [policy=logjam]"); n != 1 {
		t.Errorf("the failing cell's name is printed %d times, want once (its summary):\n%s", n, out)
	}
}

// On a terminal an expected verdict other than OK is yellow and a cell not
// as expected red; without colour (NO_COLOR, a pipe) nothing is escaped.
func TestColourMarksTheExpectedApartFromTheUnexpected(t *testing.T) {
	m := greenMatrix()
	m = append(m, Cell{ID: "D2", Name: "D2 b [policy=logjam]", Family: "deadlock", Cell: scenario.Cell{Policy: "logjam"}, Expected: verdict.OK, Observed: verdict.Hang})
	var plain, coloured strings.Builder
	RenderStyledText(&plain, m, false)
	RenderStyledText(&coloured, m, true)
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("colour off, yet escapes:\n%q", plain.String())
	}
	c := coloured.String()
	for _, want := range []string{styleExpected + "HANG" + styleReset, styleExpected + "ERROR" + styleReset, styleUnexpected + "!HANG/OK" + styleReset, "OK          "} {
		if !strings.Contains(c, want) {
			t.Errorf("the coloured matrix lacks %q:\n%q", want, c)
		}
	}
	if strings.Contains(c, styleUnexpected+"HANG") || strings.Contains(c, "m"+"OK"+styleReset) {
		t.Errorf("an expected cell is red, or an OK styled:\n%q", c)
	}
	stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(c, "")
	if stripped != plain.String() {
		t.Errorf("colour moved the columns:\n%s\nwant:\n%s", stripped, plain.String())
	}
}
