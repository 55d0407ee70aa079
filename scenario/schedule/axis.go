package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"logjam/failpoints"
	"logjam/scenario"
)

// An Axis is one fault domain of a sink schedule (fd 2, its stalls, its
// refused writes, sys.stderr, SIGINT, threads and calls, the abort, lines
// outside a call, daemons, the runtime): one type in one file that
// owns its fields (embedded in Sink, so the JSON stays flat), its rules of
// shape, its rules of logjam's promise, what it injects and how a
// shrinker makes it simpler, and how the parent arranges it. Validate,
// InContract, Contract, Faults, Failpoints, Slowness and the shrinker's
// steps are loops over Axes. docs/ADDING-A-SCENARIO.md, "Adding an axis",
// says how to add one; TestEveryAxisIsRegisteredOnce pins the registry.
type Axis interface {
	// Name is the axis's one name, as docs/CONTRACT.md and the shrink
	// steps say it.
	Name() string
	// Validate checks the axis's fields' shape and bounds (the threads are
	// checked before any axis that names one).
	Validate(k *Sink) error
	// InContract says why the schedule lies outside logjam's contract on
	// this axis (docs/CONTRACT.md), or nil.
	InContract(s Schedule) error
	// Arrange sets what the parent arranges and the ledger checks for
	// this axis in a cell's contract.
	Arrange(k *Sink, c *scenario.Contract)
	// Faults counts what the axis injects, for the shrink ratio.
	Faults(k *Sink) int
	// Failpoints are the GO_FAILPOINTS terms the child plays the axis by.
	Failpoints(k *Sink) failpoints.Set
	// Slowness is how long the axis's own slowness may take at most.
	Slowness(s Schedule) time.Duration
	// Steps are the shrinker's changes of this axis, each one schedule
	// one change smaller (package search tries them in Phase order).
	Steps(s Schedule) []Step
}

// Axes are the registered axes, in the order their rules and steps are
// tried. Adding an axis is its file, its test, a line here and, for its
// draw, one in sinkDraws (draw.go).
var Axes = []Axis{
	abortAxis{},
	threadsAxis{},
	daemonsAxis{},
	outsideAxis{},
	sigintAxis{},
	stderrAxis{},
	stallsAxis{},
	fd2Axis{},
	fd2ErrorsAxis{},
	runtimeAxis{},
	poolAxis{},
	handlerAxis{},
	forwarderFatalAxis{},
	forkAxis{},
	crashAxis{},
}

// noAxisPart is what an axis embeds for the parts it has none of.
type noAxisPart struct{}

func (noAxisPart) InContract(Schedule) error         { return nil }
func (noAxisPart) Arrange(*Sink, *scenario.Contract) {}
func (noAxisPart) Faults(*Sink) int                  { return 0 }
func (noAxisPart) Failpoints(*Sink) failpoints.Set   { return nil }
func (noAxisPart) Slowness(Schedule) time.Duration   { return 0 }
func (noAxisPart) Steps(Schedule) []Step             { return nil }
func (noAxisPart) Validate(*Sink) error              { return nil }

// A Phase orders the shrinker's steps: every axis's steps of one phase
// come before the next phase's, each phase in the order of Axes.
type Phase int

const (
	// PhaseCheap: what makes every later run cheaper (fewer lines, whole
	// reads).
	PhaseCheap Phase = iota
	// PhaseCoarse: much removed at once.
	PhaseCoarse
	// PhasePart: one whole part at a time.
	PhasePart
	// PhaseDetail: each call's lines and faults.
	PhaseDetail
	// PhaseLast: what is left.
	PhaseLast
)

// A Step is one change a shrinker may make: a change (Apply), or a count
// (Key, N, Set) the shrinker tries smaller values of (search.bisect),
// each a candidate of its own, and one fewer last unless NoOneFewer.
type Step struct {
	Phase Phase
	What  string
	Apply func(c *Schedule)

	Key        string
	N          int
	Set        func(c *Schedule, n int)
	Label      func(m int) string // a count's try, "key n -> m" when nil
	NoOneFewer bool
}

// change and count are the two kinds of Step.
func change(p Phase, what string, apply func(c *Schedule)) Step {
	return Step{Phase: p, What: what, Apply: apply}
}

func count(p Phase, key string, n int, set func(c *Schedule, n int)) Step {
	return Step{Phase: p, Key: key, N: n, Set: set}
}

// AtMost is the key of the step that caps every count of lines at once.
const AtMost = "at most"

// lineCapper is an axis with counts of lines (or marks at a line) that
// the "at most" step caps all at once.
type lineCapper interface {
	// mostLines is the largest count of lines the axis logs (0: none).
	mostLines(k *Sink) int
	capLines(k *Sink, m int)
}

// lineRunner is an axis that logs lines: runs of them and their message
// size (Schedule.Lines, MessageBytes).
type lineRunner interface {
	lineRuns(k *Sink, fn func(lines, size int))
}

// Steps are every axis's shrink steps, in Phase order (each phase in the
// order of Axes), a lazy-init schedule's included.
func (s Schedule) Steps() []Step {
	if s.Lazy != nil {
		return s.Lazy.steps()
	}
	most := 0
	for _, a := range Axes {
		if lc, ok := a.(lineCapper); ok {
			most = max(most, lc.mostLines(s.Sink))
		}
	}
	steps := []Step{{Phase: PhaseCheap, Key: AtMost, N: most, NoOneFewer: true,
		Label: func(m int) string { return fmt.Sprintf("at most %d lines a call", m) },
		Set: func(c *Schedule, m int) {
			for _, a := range Axes {
				if lc, ok := a.(lineCapper); ok {
					lc.capLines(c.Sink, m)
				}
			}
		}}}
	for _, a := range Axes {
		steps = append(steps, a.Steps(s)...)
	}
	slices.SortStableFunc(steps, func(a, b Step) int { return cmp.Compare(a.Phase, b.Phase) })
	return steps
}

// InContract reports why a valid schedule lies outside logjam's contract
// (docs/CONTRACT.md), or nil: every axis's rules, the ones the generator
// draws by, so that a shrinker (or a hand-written row) cannot step
// outside it. Validate says whether a schedule can be played; InContract
// whether logjam must pass it.
func (s Schedule) InContract() error {
	if s.Sink == nil {
		return nil
	}
	for _, a := range Axes {
		if err := a.InContract(s); err != nil {
			return fmt.Errorf("schedule outside the contract: %w", err)
		}
	}
	return nil
}

// outside is an axis's contract error.
func outside(format string, args ...any) error { return fmt.Errorf(format, args...) }

// Failpoints is the GO_FAILPOINTS value the child runs with, every axis's
// terms; everything else the schedule drives in-process.
func (s Schedule) Failpoints() failpoints.Set {
	if s.Sink == nil {
		return nil
	}
	var set failpoints.Set
	for _, a := range Axes {
		set = append(set, a.Failpoints(s.Sink)...)
	}
	return set
}

// Faults counts what a schedule injects, for the shrink ratio: every
// axis's faults (a lazy-init schedule's ops and race).
func (s Schedule) Faults() int {
	if s.Lazy != nil {
		return s.Lazy.faults()
	}
	n := 0
	for _, a := range Axes {
		n += a.Faults(s.Sink)
	}
	return n
}

// Slowness is how long the schedule's own slowness may take at most (a
// slow sys.stderr, a forwarder's small reads). A deadline is a bound on
// failure detection: a run's must exceed this.
func (s Schedule) Slowness() time.Duration {
	if s.Sink == nil {
		return 0
	}
	var d time.Duration
	for _, a := range Axes {
		d += a.Slowness(s)
	}
	return d
}

// nthThenOn fires from the k-th evaluation on; nthOnce at the k-th only.
func nthThenOn(k int, act string) string {
	if k <= 1 {
		return act
	}
	return fmt.Sprintf("%d*off->%s", k-1, act)
}

func nthOnce(k int, act string) string {
	if k <= 1 {
		return "1*" + act
	}
	return fmt.Sprintf("%d*off->1*%s", k-1, act)
}
