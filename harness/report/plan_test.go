package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/internal/shard"
)

// PlanOf names every spec the run selected, this shard's and the others'
// (skipped with shard.SkipMessage), and among this shard's those that left
// no row: passed without a cell, or skipped on their own. A spec outside
// the focus, a pending one and a BeforeSuite are in neither.
func TestPlanOfNamesEverySpecOfTheSplit(t *testing.T) {
	it := func(leaf string, state types.SpecState, msg string, cell bool) types.SpecReport {
		sr := types.SpecReport{ContainerHierarchyTexts: []string{"A suite"}, LeafNodeText: leaf, LeafNodeType: types.NodeTypeIt, State: state}
		sr.Failure.Message = msg
		if cell {
			sr.ReportEntries = types.ReportEntries{{Name: EntryName}}
		}
		return sr
	}
	reports := []types.Report{{SpecReports: types.SpecReports{
		it("D1 ran", types.SpecStatePassed, "", true),
		it("D2 failed", types.SpecStateFailed, "boom", true),
		it("R seed=1 passed", types.SpecStatePassed, "", false),
		it("D3 other shard", types.SpecStateSkipped, shard.SkipMessage+"1/2", false),
		it("D4 out of focus", types.SpecStateSkipped, "", false),
		it("D5 needs linux", types.SpecStateSkipped, "needs Linux: pipes", false),
		it("D6 pending", types.SpecStatePending, "", false),
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
	}}}
	raw, _ := json.Marshal(reports)
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	plan, noCell, err := PlanOf(path, "deadlock", 2)
	if err != nil {
		t.Fatal(err)
	}
	specs := func(ps []PlannedSpec) []string {
		var s []string
		for _, p := range ps {
			if p.Family != "deadlock" {
				t.Errorf("family %q", p.Family)
			}
			s = append(s, p.Spec)
		}
		return s
	}
	if got, want := specs(plan), []string{"A suite D1 ran", "A suite D2 failed", "A suite R seed=1 passed", "A suite D3 other shard", "A suite D5 needs linux"}; !reflect.DeepEqual(got, want) {
		t.Errorf("plan %q, want %q", got, want)
	}
	if got, want := specs(noCell), []string{"A suite R seed=1 passed", "A suite D5 needs linux"}; !reflect.DeepEqual(got, want) {
		t.Errorf("no cell %q, want %q", got, want)
	}
	for _, ps := range noCell {
		if ps.Repeat != 2 {
			t.Errorf("no cell %v does not name its repeat, 2", ps)
		}
	}
}
