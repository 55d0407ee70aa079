package calibrate

import (
	"slices"
	"strings"
	"testing"

	"logjam/internal/axes"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/verdict"
)

// Every scenario is calibrated or named as not reproduced, with why: never
// a silent skip.
func TestEveryScenarioIsCalibratedOrNamed(t *testing.T) {
	named := map[string]bool{}
	for _, r := range Rows {
		if _, err := r.Contract(); err != nil {
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
	for _, in := range scenario.All() {
		if (in.Real.FD2 != "") == (in.Real.NotHere != "") {
			t.Errorf("scenario %s: its Real needs one of FD2 (how the real column plays it) and NotHere (why it cannot), not %+v", in.ID, in.Real)
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

// The calibration names no limit: a new one fails here (fix the real play
// or the model instead).
func TestNoNamedLimit(t *testing.T) {
	if len(Limits) != 0 {
		t.Errorf("named limits %v; the calibration has none", Limits)
	}
}

// A limit, were there one, accepts only the cells and real verdicts it names.
func TestLimitForMatchesOnlyWhatItNames(t *testing.T) {
	saved := Limits
	defer func() { Limits = saved }()
	Limits = []Limit{{ID: "planted", Reason: "a test's", Rows: []string{"T1"}, Policies: []string{"buffered"}, Buffering: Buffered, Real: []verdict.Verdict{"LOST"}}}
	if l := LimitFor("T1", "buffered", Buffered, "3.12.1", "LOST"); l == nil || l.ID != "planted" {
		t.Errorf("T1 buffered LOST: limit %v, want planted", l)
	}
	for _, c := range [][4]string{{"T1", "fd2", Buffered, "LOST"}, {"T1", "buffered", Unbuffered, "LOST"}, {"T1", "buffered", Buffered, "HANG"}, {"I2", "buffered", Buffered, "LOST"}} {
		if l := LimitFor(c[0], c[1], c[2], "3.12.1", verdict.Verdict(c[3])); l != nil {
			t.Errorf("%v: limit %s accepts it", c, l.ID)
		}
	}
}

// A random-found row plays the very schedule suites/random keeps for it
// (schedule.Findings, one for each), and the schedule takes every
// interpreter version and buffering the calibration puts in.
func TestRandomFoundRowsAreTheSuitesSchedules(t *testing.T) {
	n := 0
	for _, r := range Rows {
		if r.Schedule == "" {
			continue
		}
		n++
		if r.Schedule != schedule.Findings[r.ID].Schedule {
			t.Errorf("row %s: its schedule is not schedule.Findings[%q]", r.ID, r.ID)
		}
		for _, py := range []string{"3.10.13", "3.11.2", "3.13.0"} {
			for _, buf := range []string{Buffered, Unbuffered} {
				if _, ok, err := r.ScheduleFor("pystderr", py, buf); !ok || err != nil {
					t.Errorf("row %s on %s %q: %v", r.ID, py, buf, err)
				}
			}
		}
	}
	if n != 4 || len(schedule.Findings) != 4 {
		t.Errorf("%d random-found rows of %d findings, want RF1-RF4", n, len(schedule.Findings))
	}
}

// A cell left out names a policy and buffering of the matrix, and why.
func TestLeftOutCellsAreNamed(t *testing.T) {
	for _, r := range Rows {
		for _, l := range r.LeftOut {
			if !slices.Contains(axes.Policies, l.Policy) || (l.Buffering != Buffered && l.Buffering != Unbuffered) || l.Why == "" {
				t.Errorf("row %s: left-out cell %+v names no policy, buffering or reason", r.ID, l)
			}
		}
	}
}
