package calibrate

import (
	"slices"
	"strings"
	"testing"

	"logjam/scenario"
)

// Every scenario is calibrated or named as not reproduced, with why: never
// a silent skip.
func TestEveryScenarioIsCalibratedOrNamed(t *testing.T) {
	named := map[string]bool{}
	for _, r := range Rows {
		if _, err := scenario.Lookup(r.ID); err != nil {
			t.Errorf("row %s: %v", r.ID, err)
		}
		named[r.ID] = true
	}
	for _, n := range NotReproduced {
		for _, id := range strings.Fields(n.Rows) {
			if named[id] {
				t.Errorf("%s is both calibrated and not reproduced", id)
			}
			named[id] = true
		}
	}
	for _, id := range scenario.IDs() {
		if !named[id] {
			t.Errorf("scenario %s is neither a calibrated row nor named in NotReproduced", id)
		}
	}
}

// Every limit names rows the calibration plays and accepts some verdict.
func TestLimitsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range Limits {
		if l.ID == "" || l.Reason == "" || len(l.Real) == 0 || seen[l.ID] {
			t.Errorf("limit %q: needs a unique id, a reason and the real verdicts it accepts", l.ID)
		}
		seen[l.ID] = true
		for _, r := range l.Rows {
			if !slices.ContainsFunc(Rows, func(x Row) bool { return x.ID == r }) {
				t.Errorf("limit %s: row %s is not calibrated", l.ID, r)
			}
		}
	}
}
