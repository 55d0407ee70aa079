// Package search runs random fault schedules (package schedule) the way the
// matrix runs a cell: one child under the watchdog, fd 2 and signals
// arranged by the parent, the verdict from the ledger. It searches (N runs
// from a seed), replays, groups failures by cause and shrinks each into a
// 1-minimal schedule that fails the same way.
package search

import (
	"context"
	"strings"
	"time"

	"logjam/harness/cell"
	"logjam/internal/config"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/scenario/schedule/gen"
	"logjam/verdict"
)

// Deadline is one random run's deadline before scaling, beyond the
// schedule's own slowness (a slow sys.stderr): a random run that does not
// hang ends well under a second (the longest stall is 400 ms).
const Deadline = 10 * time.Second

// Runner runs schedules with one child binary and one profile.
type Runner struct {
	Bin     string
	Profile config.Profile
}

// Run plays one schedule and returns the cell outcome. A reported cycle
// is a HANG at once whatever the profile's mode: a random search cannot
// wait out every deadline, and the cycle is the child's own observation.
func (r Runner) Run(ctx context.Context, s schedule.Schedule) (*cell.Outcome, error) {
	return cell.Run(ctx, r.Bin, Spec(s), r.Prof())
}

// Spec is the cell that plays schedule s.
func Spec(s schedule.Schedule) cell.Spec {
	return cell.Spec{Cell: scenario.Cell{Scenario: "R", Buffering: s.Buffering}, Schedule: s.Encode(), Failpoints: s.Failpoints(), Deadline: Deadline + s.Slowness()}
}

// Prof is the profile random runs use: the runner's, in fast mode.
func (r Runner) Prof() config.Profile {
	prof := r.Profile
	prof.Mode = "fast"
	return prof
}

// SeedOf is the seed of run i of a search from seed: consecutive, so that
// `-random 1 -seed SeedOf(seed, i)` replays run i alone.
func SeedOf(seed uint64, i int) uint64 { return seed + uint64(i) }

// Draw is the schedule of one run seed.
func Draw(seed uint64, f schedule.Filter) schedule.Schedule {
	return gen.Schedules(f).Example(int(seed & (1<<62 - 1)))
}

// Result is one random run.
type Result struct {
	Index    int
	Seed     uint64
	Schedule schedule.Schedule
	Verdict  verdict.Verdict
	Class    string
	// Cause is the failure's evidence route (Cause), "" for a pass.
	Cause  string
	Reason string
	Cycle  string
	Ms     int64
	// Threads is each thread's locks and wait at the watchdog's dump, one
	// line ("": no dump was taken).
	Threads string
}

// Failed reports whether the ledger found anything.
func (r Result) Failed() bool { return r.Verdict != verdict.OK }

// Class names a failure the way the matrix does: the policy (or the
// lazy-init variant) and the verdict, with what makes it one of the
// matrix's known classes: what the reported cycle waits for, then what
// each axis makes of it (schedule.Schedule.FailureWords: the platform,
// how the run ended, the faults it had).
func Class(s schedule.Schedule, v verdict.Verdict, cycle string) string {
	if s.Lazy != nil {
		return "lazyinit/" + s.Variant + " " + string(v)
	}
	c := s.Policy + " " + string(v)
	var why []string
	if v == verdict.Hang {
		switch {
		case strings.Contains(cycle, "room on fd 2"):
			why = append(why, "pipe")
		case strings.Contains(cycle, "the GIL") && strings.Contains(cycle, "waits for the stdio lock"):
			why = append(why, "gil+stdio-lock")
		case strings.Contains(cycle, "the GIL") && strings.Contains(cycle, "workspace lock"):
			why = append(why, "gil+backend-lock")
		case cycle == "":
			why = append(why, "no cycle")
		}
	}
	why = append(why, s.FailureWords(v)...)
	if len(why) > 0 {
		c += " (" + strings.Join(why, ",") + ")"
	}
	return c
}
