package report

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"logjam/internal/textout"
	"logjam/verdict"
)

// besideSample is sinkSample with each cell's built-in columns, as
// logjam calibrate -sink writes them after playing the model's cells.
func besideSample() (Run, []Cell) {
	run, cells := sinkSample()
	for i := range cells {
		cells[i].Beside = map[string]verdict.Verdict{"pystderr": verdict.Hang, "fd2": verdict.OK, "buffered": verdict.Lost,
			"adaptive": verdict.OK, "merged": verdict.OK, "logjam": verdict.OK}
		cells[i].Bundle = "/home/me/logjam/reports/runs/r/evidence/" + strings.NewReplacer(" ", "_", "[", "", "]", "").Replace(cells[i].Name)
		cells[i].Sink.Path = "/home/me/binding/mine.cpp"
	}
	return run, cells
}

// A sink run reads as a chaos run does, in each of its three renderings:
// the sink's column first with the six built-in policies' verdicts beside
// it (never counted as cells), the sink's own legend (what its column and
// the built-in ones are), and in the terminal each cell not OK summed up
// with the replay line that rebuilds the sink from its path.
func TestASinkRunShowsTheBuiltInColumnsBesideAndItsOwnLegend(t *testing.T) {
	run, cells := besideSample()
	m := Collapse(Group(cells))
	var w strings.Builder
	if bad := RenderText(&w, m); bad != 3 {
		t.Errorf("%d cells not as expected, want the sink's 3 (the built-in columns are no cells)", bad)
	}
	out := w.String()
	header := regexp.MustCompile(`(?m)^id +mine +pystderr +fd2 +buffered +adaptive +merged +logjam *$`)
	if !header.MatchString(out) {
		t.Errorf("the grid's columns are not the sink's, then the six built-in policies':\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^F1 py3\.11\.7 +!LOST/OK +HANG +OK +LOST +OK +OK +OK *$`).MatchString(out) {
		t.Errorf("F1's row lacks the built-in verdicts beside the sink's:\n%s", out)
	}
	legend := SinkLegend("mine", "mine.cpp")
	for _, l := range legend {
		if !strings.Contains(out, "\n  "+l+"\n") {
			t.Errorf("the text legend lacks %q:\n%s", l, out)
		}
	}
	if strings.Contains(out, Legend[len(Legend)-2]) {
		t.Errorf("a sink run's legend explains the harness rows:\n%s", out)
	}
	want := "  evidence: ./logjam replay -sink /home/me/binding/mine.cpp /home/me/logjam/reports/runs/r/evidence/F1_sink=mine.cpp_stderr=buffered_py=3.11.7\n" +
		"  rerun: ./logjam calibrate -sink /home/me/binding/mine.cpp -rows F1 -py 3.11.7 -buffering buffered\n"
	if !strings.Contains(out, want) {
		t.Errorf("F1's summary lacks\n%s in:\n%s", want, out)
	}

	md := string(Markdown(run, Group(cells)))
	for _, want := range []string{"## logjam calibrate -sink ` mine.cpp `: 3 cells", "| id | mine | pystderr | fd2 | buffered | adaptive | merged | logjam |",
		"| F1 py3.11.7 | **LOST** (expected OK) | HANG | OK | LOST | OK | OK | OK |", "| cell | expected | observed | reason | rerun |"} {
		if !strings.Contains(md, want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, md)
		}
	}
	page, err := HTML(run, Group(cells), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := html.UnescapeString(string(page))
	for _, l := range legend {
		if !strings.Contains(md, "- "+textout.MarkdownCell(l)+"\n") {
			t.Errorf("matrix.md lacks the legend line %q", l)
		}
		if !strings.Contains(p, "<li>"+l+"</li>") {
			t.Errorf("matrix.html lacks the legend line %q", l)
		}
	}
	for _, want := range []string{"<h1>logjam calibrate -sink mine.cpp: your sink on real CPython 3.11.7, 3.12.1, beside the built-in policies</h1>",
		`<td class="beside v-hang"`, "./logjam replay -sink /home/me/binding/mine.cpp /home/me/logjam/reports/runs/r/evidence/F1_sink=mine.cpp_stderr=buffered_py=3.11.7"} {
		if !strings.Contains(p, want) {
			t.Errorf("matrix.html lacks %q", want)
		}
	}
	if n := strings.Count(p, "data-cell="); n != 3 {
		t.Errorf("matrix.html marks %d cells, want the sink's 3", n)
	}
	junit, err := JUnit(run, Group(cells))
	if err != nil {
		t.Fatal(err)
	}
	j := html.UnescapeString(string(junit))
	for _, want := range []string{"replay it: ./logjam replay -sink /home/me/binding/mine.cpp /home/me/logjam/reports/runs/r/evidence/F1_sink=mine.cpp_stderr=buffered_py=3.11.7",
		"the built-in policies here (the model's cells): pystderr HANG, fd2 OK, buffered LOST, adaptive OK, merged OK, logjam OK"} {
		if !strings.Contains(j, want) {
			t.Errorf("junit.xml lacks %q", want)
		}
	}
}
