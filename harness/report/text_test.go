package report

import (
	"strings"
	"testing"

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
