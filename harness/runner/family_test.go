package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/harness/report"
	"logjam/internal/claim"
)

func spec(text string, state types.SpecState, msg string) types.SpecReport {
	return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state,
		LeafNodeLocation: types.CodeLocation{FileName: "x_test.go", LineNumber: len(text)}, Failure: types.Failure{Message: msg}}
}

func writeReport(t *testing.T, dir, name string, specs ...types.SpecReport) string {
	t.Helper()
	before := types.SpecReport{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed}
	raw, err := json.Marshal([]types.Report{{SuiteDescription: "x suite", SuiteSucceeded: true, SpecReports: append(types.SpecReports{before}, specs...)}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A family's spec processes' reports join into one as Ginkgo's CLI joins
// its parallel processes': each spec once, as the process that ran it
// says. A process reports the specs it claimed, not the others'; one
// claimed by a process that left no report is a failed spec, read from its
// claim, never one that vanished (as is one a process listed as another's
// claim, and every other skipped).
func TestMergeReportsKeepsEachSpecOnceAsItRan(t *testing.T) {
	dir := t.TempDir()
	claims := filepath.Join(dir, "claims")
	t.Setenv(claim.Env, claims)
	if err := os.Mkdir(claims, 0o755); err != nil {
		t.Fatal(err)
	}
	procs := make([]*claim.Claimer, 3)
	for i := range procs {
		procs[i], _ = claim.FromEnv()
	}
	// The order every process walks, and who claimed each spec: p3 (index
	// 2) claimed C and E, and died.
	for i, text := range []string{"A", "B", "C", "D", "E"} {
		won := map[string]int{"A": 0, "B": 1, "C": 2, "D": 1, "E": 2}[text]
		what, _ := json.Marshal(spec(text, types.SpecStateSkipped, claim.SkipMessage))
		for _, p := range []int{won, (won + 1) % 3, (won + 2) % 3} { // the winner first
			if ok, err := procs[p].Take(text, func() []byte { return what }); err != nil || ok != (p == won) {
				t.Fatalf("spec %d %s: process %d claimed %v, %v", i, text, p, ok, err)
			}
		}
	}
	claimed := func(text string) types.SpecReport { return spec(text, types.SpecStateSkipped, claim.SkipMessage) }
	p1 := writeReport(t, dir, "p1", spec("A", types.SpecStatePassed, ""), claimed("B"), spec("D", types.SpecStateSkipped, "interrupted"))
	p2 := writeReport(t, dir, "p2", spec("B", types.SpecStateFailed, "boom"), spec("D", types.SpecStatePassed, ""))
	gone := filepath.Join(dir, "p3") // a process that left no report (it claimed C and E and died)
	out := filepath.Join(dir, "merged.json")
	if err := mergeReports([]string{p1, p2, gone}, claims, out); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(out)
	var rs []types.Report
	if err := json.Unmarshal(raw, &rs); err != nil || len(rs) != 1 {
		t.Fatalf("merged: %v, %d reports", err, len(rs))
	}
	got := map[string]types.SpecReport{}
	suiteNodes := 0
	for _, sr := range rs[0].SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			suiteNodes++
			continue
		}
		if _, dup := got[sr.LeafNodeText]; dup {
			t.Errorf("spec %s twice", sr.LeafNodeText)
		}
		got[sr.LeafNodeText] = sr
	}
	want := map[string]types.SpecState{"A": types.SpecStatePassed, "B": types.SpecStateFailed, "C": types.SpecStateFailed, "D": types.SpecStatePassed, "E": types.SpecStateFailed}
	for text, st := range want {
		if got[text].State != st {
			t.Errorf("spec %s: %s, want %s", text, got[text].State, st)
		}
	}
	for _, text := range []string{"C", "E"} {
		if !strings.Contains(got[text].Failure.Message, "ended before it reported it") {
			t.Errorf("spec %s, claimed by no process that reported it: %q", text, got[text].Failure.Message)
		}
	}
	if len(got) != len(want) || suiteNodes != 1 || rs[0].SuiteSucceeded {
		t.Errorf("%d specs, %d suite nodes, succeeded %v; want 5, 1 (the first process's), false", len(got), suiteNodes, rs[0].SuiteSucceeded)
	}
	if err := mergeReports([]string{gone}, claims, filepath.Join(dir, "none.json")); err == nil {
		t.Error("no report at all was merged into one")
	}
}

// A family run in several spec processes runs each spec exactly once:
// the matrix has each cell once, and the suites sent one progress line per
// spec (a claim that let every process run a spec would send three).
func TestSpecProcessesRunEachSpecOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the suites and runs eight cells")
	}
	out := t.TempDir()
	var w bytes.Buffer
	code := Main([]string{"chaos", "-focus", `U[12] `, "-procs", "3", "-out", out, "utf8"}, &w)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, w.String())
	}
	runInfo, cells, err := report.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, c := range cells {
		seen[c.Name]++
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("cell %s %d times", name, n)
		}
	}
	if len(cells) != 24 || len(runInfo.Plan) != 24 {
		t.Errorf("%d cells, plan of %d specs; want U1 and U2's 24", len(cells), len(runInfo.Plan))
	}
	raw, err := os.ReadFile(filepath.Join(out, "logs", "progress.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ended := 0
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var ev ProgressEvent
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Spec != "" {
			ended++
		}
	}
	if ended != 24 {
		t.Errorf("%d specs ended, as the suites said; want 24", ended)
	}
	log, _ := os.ReadFile(filepath.Join(out, "logs", "utf8.log"))
	if n := strings.Count(string(log), "=== utf8, repeat 1, spec process "); n != 3 {
		t.Errorf("the family's log has %d spec processes' output, want 3", n)
	}
	if _, err := os.Stat(filepath.Join(out, "claims")); err == nil {
		if left, _ := os.ReadDir(filepath.Join(out, "claims")); len(left) > 0 {
			t.Errorf("claims left behind: %v", left)
		}
	}
}
