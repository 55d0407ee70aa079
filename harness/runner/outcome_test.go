package runner

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/harness/report"
)

// Ginkgo's failing exit status is never dropped: a repeat whose report
// shows every spec passing but whose Ginkgo exited 1 is a failing row, as
// is a repeat that left no report.
func TestGinkgosFailingStatusIsARow(t *testing.T) {
	c := report.Cell{ID: "F1", Name: "F1 x", Family: "fatal", Expected: "OK", Observed: "OK"}
	rep := types.Report{SuiteDescription: "fatal suite", SpecReports: types.SpecReports{{LeafNodeType: types.NodeTypeIt,
		LeafNodeText: "F1 x", State: types.SpecStatePassed,
		ReportEntries: types.ReportEntries{{Name: report.EntryName, Value: types.WrapEntryValue(c)}}}}}
	raw, _ := json.Marshal([]types.Report{rep})
	js := filepath.Join(t.TempDir(), "fatal.r1.json")
	if err := os.WriteFile(js, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	exit1 := exec.Command("sh", "-c", "exit 1").Run()

	if rows := repeatOutcome("fatal", 1, js, "fatal.log", nil, false); report.Matrix(rows).Unexpected() != 0 || len(rows) != 1 {
		t.Fatalf("a passing repeat: %+v", rows)
	}
	rows := repeatOutcome("fatal", 1, js, "fatal.log", exit1, false)
	if report.Matrix(rows).Unexpected() != 1 || !strings.Contains(rows[len(rows)-1].Failure, "ginkgo exited 1") {
		t.Fatalf("ginkgo exited 1 with a passing report: %+v", rows)
	}
	if rows := repeatOutcome("fatal", 1, js, "fatal.log", exit1, true); report.Matrix(rows).Unexpected() != 0 {
		t.Fatalf("an interrupted run's status is the signal's, not a row: %+v", rows)
	}
	rows = repeatOutcome("fatal", 2, filepath.Join(t.TempDir(), "none.json"), "fatal.log", exit1, false)
	if len(rows) != 1 || rows[0].AsExpected() || rows[0].Repeat != 2 || !strings.Contains(rows[0].Failure, "left no report") {
		t.Fatalf("a repeat without a report: %+v", rows)
	}
}
