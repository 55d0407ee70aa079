package calibrate

import (
	"slices"
	"strings"

	"logjam/verdict"
)

// Limit is a documented, named limit of what the model claims: a cell where
// real CPython may differ from the simulated verdict, and why. The suite
// accepts a difference only when a limit matches it, and lists every limit
// in its report.
type Limit struct {
	ID     string
	Reason string

	Rows     []string          // scenario ids
	Policies []string          // nil: every policy
	Profile  string            // Buffered or Unbuffered; "*" for both
	Python   string            // a version prefix ("3.10."); "" for any
	Real     []verdict.Verdict // the real verdicts the limit accepts
}

// Limits is the one table of them.
var Limits = []Limit{
	{ID: "T1-no-catch-all",
		Reason: "the model's buffered sink runs under pybind11's dispatcher, whose catch (...) frame turns the forced unwind of a daemon thread at exit into std::terminate (CRASH); the calibration extension has no such frame, so the unwind passes through and the kept lines are LOST, and CPython itself sometimes aborts in _enter_buffered_busy (CRASH) or the thread gets its lines out first (OK): timing against finalization",
		Rows:   []string{"T1"}, Policies: []string{"buffered"}, Profile: Buffered,
		Real: []verdict.Verdict{verdict.Lost, verdict.Crash, verdict.OK}},
}

// LimitFor is the limit that accepts real differing from the simulated
// verdict of this cell, or nil.
func LimitFor(row, policy, profile, python string, real verdict.Verdict) *Limit {
	for i, l := range Limits {
		if slices.Contains(l.Rows, row) && (l.Policies == nil || slices.Contains(l.Policies, policy)) &&
			(l.Profile == "*" || l.Profile == profile) && strings.HasPrefix(python, l.Python) &&
			slices.Contains(l.Real, real) {
			return &Limits[i]
		}
	}
	return nil
}
