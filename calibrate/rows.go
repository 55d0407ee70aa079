package calibrate

import (
	"fmt"
	"maps"
	"slices"

	"logjam/internal/axes"
	"logjam/scenario"
	"logjam/scenario/schedule"
)

// FD2 kinds the parent arranges for a real run (cell.ArrangeFD2's).
const (
	FD2File = scenario.FD2File       // a temporary file
	FD2Pipe = scenario.FD2ParentPipe // a one-page pipe the parent drains
	FD2PTY  = scenario.FD2PTY        // a new pty's slave; the parent reads the master
)

// Row is one real reproduction: the scenario's contract (from the
// simulated scenario package, so both columns are judged alike) and how the
// parent arranges the real child (scenario.Real, on the row's catalogue
// entry or its finding).
type Row struct {
	ID string
	scenario.Real
	Variants []string // lazy init
	// Schedule is a random-found row's schedule (schedule.Findings, as
	// suites/random plays it): its contract is the schedule's, and the
	// simulated cell plays it as scenario R with the column's policy, the
	// interpreter's version and the buffering put in.
	Schedule string
}

// Rows are the rows the real column reproduces: every catalogued scenario
// whose Real plays here (by id), then every row random search found. A row
// is declared on its catalogue entry, never here.
var Rows = func() []Row {
	var rs []Row
	for _, in := range scenario.All() {
		if !in.Real.Plays() {
			continue
		}
		r := Row{ID: in.ID, Real: in.Real}
		if in.Family == "lazyinit" {
			r.Variants = LazyVariants
		}
		rs = append(rs, r)
	}
	for _, id := range slices.Sorted(maps.Keys(schedule.Findings)) {
		f := schedule.Findings[id]
		rs = append(rs, Row{ID: id, Real: f.Real, Schedule: f.Schedule})
	}
	return rs
}()

// RowNamed is the real row id (Rows); ok is false when there is none.
func RowNamed(id string) (Row, bool) {
	i := slices.IndexFunc(Rows, func(r Row) bool { return r.ID == id })
	if i < 0 {
		return Row{}, false
	}
	return Rows[i], true
}

// Plays reports whether the row plays policy under buffering.
func (r Row) Plays(policy, buffering string) bool {
	for _, l := range r.LeftOut {
		if l.Policy == policy && l.Buffering == buffering {
			return false
		}
	}
	return true
}

// LazyVariants are the torch.cuda._lazy_call variants.
var LazyVariants = axes.LazyVariants

// NotReproduced names the matrix's rows the real column leaves out, and
// why (their catalogue entries' Real.NotHere), rows with one reason
// together; the report lists them (never a silent skip).
var NotReproduced = func() []struct{ Rows, Why string } {
	var out []struct{ Rows, Why string }
	at := map[string]int{}
	for _, in := range scenario.All() {
		why := in.Real.NotHere
		if why == "" {
			continue
		}
		if i, ok := at[why]; ok {
			out[i].Rows += " " + in.ID
			continue
		}
		at[why] = len(out)
		out = append(out, struct{ Rows, Why string }{in.ID, why})
	}
	return out
}()

// ScheduleFor is the row's schedule for one simulated cell: policy, the
// interpreter's version and the buffering put in; ok is false for a
// catalogued row.
func (r Row) ScheduleFor(policy, python, buffering string) (schedule.Schedule, bool, error) {
	if r.Schedule == "" {
		return schedule.Schedule{}, false, nil
	}
	s, err := schedule.Decode(r.Schedule)
	if err != nil {
		return s, true, fmt.Errorf("row %s: %w", r.ID, err)
	}
	s.Policy, s.Python, s.Buffering = policy, python, buffering
	if err := s.Validate(); err != nil {
		return s, true, fmt.Errorf("row %s: %w", r.ID, err)
	}
	return s, true, nil
}

// Contract is what the row's run requires: the catalogued scenario's, or
// the schedule's.
func (r Row) Contract() (scenario.Contract, error) {
	if r.Schedule != "" {
		s, err := schedule.Decode(r.Schedule)
		if err != nil {
			return scenario.Contract{}, fmt.Errorf("row %s: %w", r.ID, err)
		}
		return s.Contract(), nil
	}
	info, err := scenario.Lookup(r.ID)
	if err != nil {
		return scenario.Contract{}, err
	}
	return info.Contract, nil
}
