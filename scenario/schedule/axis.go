package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"logjam/failpoints"
	"logjam/scenario"
	"logjam/verdict"
)

// An Axis is one fault domain of a sink schedule (fd 2, its stalls, its
// refused writes, sys.stderr, SIGINT, threads and calls, the abort, lines
// outside a call, daemons, the runtime): one type in one file that owns
// its parts of a Sink (embedded in Sink, so the JSON stays flat), its rules
// of shape, its rules of logjam's promise, its draws, what it injects and
// how a shrinker makes it simpler, how the parent arranges it and how it
// reads in words. Validate, InContract, Contract, Faults, Failpoints,
// Slowness, the generator (DrawSink), the shrinker's steps, Words and
// FailureWords are loops over Axes; the child's half of an axis is a part
// of the player in sim/programs that registers itself under the axis's
// Name. docs/ADDING-A-SCENARIO.md, "Adding an axis", says how to add one;
// TestEveryAxisIsRegisteredOnce pins the registry.
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
	// Draws are the axis's draws, each at its place in a sink schedule's
	// draw order (DrawSink runs every axis's in place order).
	Draws() []DrawAt
	// Parts are pointers to the parts of k the axis owns (fields of Sink,
	// or parts embedded in it); TestEveryAxisIsRegisteredOnce checks
	// that every part of a Sink is owned by exactly one axis.
	Parts(k *Sink) []any
	// Words are the axis's part of a schedule in words (search.Describe),
	// none when the axis is absent.
	Words(s Schedule) []string
	// FailureWords say what the axis makes of a failure with verdict v,
	// for its class (search.Class): "crash handler", "fd2 EPIPE".
	FailureWords(s Schedule, v verdict.Verdict) []string
}

// Axes are the registered axes, in the order their rules, steps, words and
// failure words are tried. This and Sink below are the registration:
// adding an axis is its file, its test, a line here and, if it has a part
// of a sink of its own, that part embedded in Sink (its draws take their
// places in its file; the child plays it by sim/programs/random_<name>.go).
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
	workerCrashAxis{},
}

// Sink is a script against the log path: a composition of the axes, each
// of which owns its parts (Axis.Parts), embedded here so that the JSON
// stays one flat object per part. The order of the fields is the JSON's,
// and so every seed's schedule (TestEverySeedDrawsItsGoldenSchedule): a
// new part goes last.
type Sink struct {
	FD2    FD2    `json:"fd2"`
	Stderr Stderr `json:"stderr"`
	Interrupts
	// Threads are the Python threads; Threads[0] is the main thread.
	Threads []Thread `json:"threads"`
	// Abort ends the main thread's last call.
	Abort *Abort `json:"abort,omitempty"`
	OutsideCalls
	DaemonThreads
	PythonHandler
	ForkPart
	CrashPart
	WorkerCrashPart
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
func (noAxisPart) Draws() []DrawAt                   { return nil }
func (noAxisPart) Parts(*Sink) []any                 { return nil }
func (noAxisPart) Words(Schedule) []string           { return nil }

func (noAxisPart) FailureWords(Schedule, verdict.Verdict) []string { return nil }

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

// Words is the sink schedule in words, one phrase a part: every axis's
// Words, in the order of Axes (search.Describe puts the runtime first).
func (s Schedule) Words() []string {
	if s.Sink == nil {
		return nil
	}
	var w []string
	for _, a := range Axes {
		w = append(w, a.Words(s)...)
	}
	return w
}

// FailureWords are what the axes make of a failure with verdict v (none
// for a pass): every axis's FailureWords, in the order of Axes.
func (s Schedule) FailureWords(v verdict.Verdict) []string {
	if s.Sink == nil {
		return nil
	}
	var w []string
	for _, a := range Axes {
		w = append(w, a.FailureWords(s, v)...)
	}
	return w
}

// Plural is n things in words: "1 line", "2 lines".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
