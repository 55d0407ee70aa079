package report

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"logjam/scenario"
)

// plantedReport is a Ginkgo JSON report of a tiny fatal suite run: one
// cell whose spec passed, one (F4 under logjam) whose verdict matched but
// whose own order assertion failed (the planted bug), a random run that
// failed outside any cell, and a BeforeSuite that failed.
func plantedReport(t *testing.T) string {
	t.Helper()
	cell := func(id, policy string) types.ReportEntry {
		c := Cell{ID: id, Name: id + " slug [policy=" + policy + "]", Family: "fatal", Cell: scenario.Cell{Scenario: id, Policy: policy},
			Expected: "OK", Observed: "OK", Rerun: "rerun " + id}
		return types.ReportEntry{Name: EntryName, Value: types.WrapEntryValue(c)}
	}
	r := types.Report{SuiteDescription: "fatal suite", SuiteSucceeded: false, SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "F1 slug [policy=logjam]", State: types.SpecStatePassed,
			ReportEntries: types.ReportEntries{cell("F1", "logjam")}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "F4 slug [policy=logjam]", State: types.SpecStateFailed,
			ReportEntries: types.ReportEntries{cell("F4", "logjam")},
			Failure: types.Failure{Message: "lines out of order on stderr: \"late\" before \"kept 1\"\nfull ledger follows",
				FailureNodeType: types.NodeTypeIt, Location: types.CodeLocation{FileName: "fatal_test.go", LineNumber: 42}}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "R seed=42 [pipes policy=fd2]", State: types.SpecStateFailed,
			Failure: types.Failure{Message: "the replay gave another verdict (HANG, then BADESC)", FailureNodeType: types.NodeTypeIt}},
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed,
			Failure: types.Failure{Message: "failpoint injection does not fire in the child", FailureNodeType: types.NodeTypeSynchronizedBeforeSuite}},
	}}
	raw, err := json.Marshal([]types.Report{r})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fatal.r1.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A Ctrl-C that lands in a report node of a spec without cells (Ginkgo
// runs ReportAfterEach for the specs the focus skipped too) leaves no row;
// one that lands in the spec's body leaves an interrupted row.
func TestAnInterruptInAReportNodeLeavesNoRow(t *testing.T) {
	interrupted := func(text string, node types.NodeType) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: types.SpecStateInterrupted,
			Failure: types.Failure{Message: "Interrupted by User", FailureNodeType: node}}
	}
	raw, err := json.Marshal([]types.Report{{SpecReports: types.SpecReports{
		interrupted("R seed=1 [sink policy=pystderr]", types.NodeTypeReportAfterEach),
		interrupted("R seed=2 [sink policy=pystderr]", types.NodeTypeIt),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "random.r1.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := FromGinkgo(path, "random")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || m[0].ID != "R seed=2" || m[0].AsExpected() {
		t.Fatalf("rows %+v; want only R seed=2, not as expected", m)
	}
}

// Every report says a spec's failed assertion failed: the cell whose
// verdict matched but whose order check did not, and each spec that
// failed outside any cell, are failing rows with their messages in
// matrix.json, run.json, junit.xml, matrix.md, matrix.html and the text
// table; nothing says "all as expected".
func TestAFailedCheckFailsItsRowInEveryReport(t *testing.T) {
	m, err := FromGinkgo(plantedReport(t), "fatal")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 4 || m.Unexpected() != 3 {
		t.Fatalf("want 4 rows, 3 not as expected; got %d rows, %d not:\n%+v", len(m), m.Unexpected(), m)
	}
	dir := t.TempDir()
	if err := WriteAll(dir, Run{Profile: "local", Started: time.Now()}, m); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	back, err := ReadMatrix(filepath.Join(dir, MatrixFile))
	if err != nil || back.Unexpected() != 3 {
		t.Fatalf("matrix.json: %d not as expected (%v), want 3", back.Unexpected(), err)
	}
	for _, c := range back {
		if c.ID == "F4" && (c.AsExpected() || !strings.Contains(c.Failure, "lines out of order")) {
			t.Errorf("matrix.json: F4 is %+v, want its order check's failure", c)
		}
		if c.ID == "F1" && !c.AsExpected() {
			t.Errorf("matrix.json: F1 passed but is %+v", c)
		}
	}

	var run Run
	if err := json.Unmarshal([]byte(read(RunFile)), &run); err != nil || run.Green || run.Tally.Not != 3 {
		t.Errorf("run.json: green %v, %d not (%v); want red, 3 not", run.Green, run.Tally.Not, err)
	}

	var suites reporters.JUnitTestSuites
	if err := xml.Unmarshal([]byte(read(JUnitFile)), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Failures != 3 {
		t.Errorf("junit.xml: %d failures, want 3", suites.Failures)
	}
	failed := map[string]string{}
	for _, s := range suites.TestSuites {
		for _, tc := range s.TestCases {
			if tc.Failure != nil {
				failed[tc.Name] = tc.Failure.Message
			}
		}
	}
	for name, want := range map[string]string{
		"F4 slug [policy=logjam]":                              "check failed: lines out of order",
		"R seed=42 [pipes policy=fd2]":                         "spec failed: the replay gave another verdict",
		string(types.NodeTypeSynchronizedBeforeSuite.String()): "spec failed: in SynchronizedBeforeSuite: failpoint injection",
	} {
		if !strings.HasPrefix(failed[name], want) {
			t.Errorf("junit.xml: %q fails with %q, want %q...", name, failed[name], want)
		}
	}

	md := read(MarkdownFile)
	for _, want := range []string{"4 cells, 1 as expected, 3 not", "lines out of order", "the replay gave another verdict", "failpoint injection does not fire"} {
		if !strings.Contains(md, want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, md)
		}
	}
	page := read(HTMLFile)
	for _, want := range []string{"1 as expected, 3 not", "failed check: lines out of order", "(check failed)", "the replay gave another verdict"} {
		if !strings.Contains(page, want) {
			t.Errorf("matrix.html lacks %q", want)
		}
	}

	var b strings.Builder
	if bad := RenderText(&b, Collapse(Group(m))); bad != 3 {
		t.Errorf("text table: %d not as expected, want 3", bad)
	}
	for _, want := range []string{"!OK+check", "!FAIL", "4 cells, 1 as expected, 3 not", "fatal F4 slug [policy=logjam]: OK as expected, but another check of its spec failed\n  failed: lines out of order"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text table lacks %q:\n%s", want, b.String())
		}
	}

	// report diff sees the failed check against a run where it passed.
	passed := append(Matrix{}, m...)
	for i := range passed {
		passed[i].Failure = ""
	}
	d := Diff(passed[:2], m[:2])
	if len(d) != 1 || !strings.Contains(d[0], "check failed") {
		t.Errorf("diff: %q, want the F4 row's failed check", d)
	}
}

// A later repeat's failed check is not hidden behind a first repeat that
// passed.
func TestALaterRepeatsFailedCheckFailsTheRow(t *testing.T) {
	c := Cell{ID: "F4", Name: "F4 x", Family: "fatal", Expected: "OK", Observed: "OK", Repeat: 1}
	d := c
	d.Repeat, d.Failure = 2, "order"
	var b strings.Builder
	if bad := RenderText(&b, Collapse(Group([]Cell{c, d}))); bad != 1 {
		t.Fatalf("%d not as expected, want 1:\n%s", bad, b.String())
	}
}
