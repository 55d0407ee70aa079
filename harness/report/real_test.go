package report

import (
	"strings"
	"testing"

	"logjam/scenario"
	"logjam/verdict"
)

// The real column is rendered beside the simulated verdict; a named limit
// accepts a difference; the buffering and the version name the row.
func TestTheRealColumn(t *testing.T) {
	m := Matrix{
		{ID: "I2", Name: "I2 a", Family: "calibrate", Cell: scenario.Cell{Policy: "logjam", Python: "3.12.1", Buffering: "unbuffered"},
			Expected: verdict.OK, Observed: verdict.OK, Real: map[string]verdict.Verdict{"3.12.1": verdict.OK}},
		{ID: "T1", Name: "T1 b", Family: "calibrate", Cell: scenario.Cell{Policy: "buffered", Python: "3.12.1"},
			Expected: verdict.Lost, Observed: verdict.Crash, Real: map[string]verdict.Verdict{"3.12.1": verdict.Lost}, Limit: "T1-no-catch-all"},
		{ID: "D1", Name: "D1 c", Family: "calibrate", Cell: scenario.Cell{Policy: "fd2", Python: "3.12.1"},
			Expected: verdict.Hang, Observed: verdict.OK, Real: map[string]verdict.Verdict{"3.12.1": verdict.Hang}},
	}
	var b strings.Builder
	bad := RenderText(&b, m)
	out := b.String()
	for _, want := range []string{"I2 py3.12.1 unbuffered", "OK | real OK", "CRASH | real LOST (limit T1-no-catch-all)", "!OK/HANG | real HANG"} {
		if !strings.Contains(out, want) {
			t.Errorf("the text table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "observed: CRASH 1, OK 2\n") || !strings.Contains(out, "legend:\n") || !strings.Contains(out, "  not as expected: !OBSERVED/EXPECTED") {
		t.Errorf("the text table lacks the counts per verdict or the legend of its markers:\n%s", out)
	}
	if bad != 1 {
		t.Errorf("RenderText counted %d unexpected cells, want 1 (the limit accepts T1)", bad)
	}
	if got := (Cell{Real: map[string]verdict.Verdict{"3.10.13": verdict.OK, "3.12.1": verdict.Lost}}).RealText(); got != "real 3.10.13 OK, 3.12.1 LOST" {
		t.Errorf("RealText = %q", got)
	}
}
