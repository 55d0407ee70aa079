package schedule

import (
	"cmp"
	"slices"
)

// A Drawer is where a draw gets its choices (package gen gives rapid's;
// this package never imports rapid, so that the child, which decodes
// schedules and never draws one, does not link it). Each choice is
// labelled for rapid's failure output. rapid's stream is positional: a
// seed's schedule stays the same only while the draws make the same
// calls in the same order.
type Drawer interface {
	Bool(label string) bool
	IntRange(lo, hi int, label string) int
	// Index is one of n choices (rapid.SampledFrom of n).
	Index(n int, label string) int
	// Indexes are lo to hi choices of n each (rapid.SliceOfN of them).
	Indexes(n, lo, hi int, label string) []int
}

// pick is one of choices.
func pick[E any](d Drawer, choices []E, label string) E {
	return choices[d.Index(len(choices), label)]
}

// swarm is the run's subset of the fault axes (swarm testing, Groce et
// al., ISSTA 2012): each is on or off for the whole run, half the time,
// and an off axis is drawn nowhere; an on one is drawn as before. With
// every axis drawn independently, a run had most of them, and a failure
// that needs a few faults together with the others absent (a stall with
// sys.stderr the original and no Ctrl-C, no fd-2 refusal, no switch point
// in any call) was rare: each absence cost its own factor, call by call
// for the per-call ones. The axes every stall, abort and thread shape
// rests on (fd 2's kind, the stalls, threads, lines outside a call,
// daemons) stay always on. rapid shrinks a flag toward off (false).
type swarm struct {
	stderr, sigint, fd2Errors                         bool // run-wide faults
	othersCall                                        bool // threads beside the main one make calls (else only lines outside one)
	switchPoints, yields, nested, fails, cjk, invalid bool // per call (and per line outside one)
}

// drawSwarm draws the swarm's flags, before any fault.
func drawSwarm(d Drawer, _ *Schedule, st *drawState) {
	st.sw = swarm{
		stderr:       d.Bool("swarm: sys.stderr replaced"),
		sigint:       d.Bool("swarm: Ctrl-C"),
		fd2Errors:    d.Bool("swarm: fd-2 refusals"),
		othersCall:   d.Bool("swarm: other threads' calls"),
		switchPoints: d.Bool("swarm: switch points"),
		yields:       d.Bool("swarm: yields"),
		nested:       d.Bool("swarm: nested calls"),
		fails:        d.Bool("swarm: calls that raise"),
		cjk:          d.Bool("swarm: three-byte characters"),
		invalid:      d.Bool("swarm: invalid bytes"),
	}
}

// drawState is what one sink draw's steps share beyond the schedule
// itself: the swarm's flags, how the run ends (drawn first, so that the
// axes an abort constrains are drawn to fit it), and the stalls' plan,
// drawn before fd 2's capacity, which depends on it.
type drawState struct {
	sw          swarm
	ending      string // "done", "fatal" or "abort"
	abortStall  bool   // a stall at a Fatal abort, alone, on a one-page pipe
	marks       bool   // stalls of a pipe's reader at marks, drawn once the calls are
	abortSigint bool   // the abort stall sends a SIGINT
	done        bool   // the schedule is whole: no later step draws
}

// A DrawAt is one of an axis's draws (Axis.Draws) at its place in a sink
// schedule's draw order: DrawSink runs every axis's draws in increasing
// Place. A draw comes after every draw whose choices it depends on (the
// ending, fd 2's kind, the calls), reading them from the schedule or from
// drawState. rapid's stream is positional: the order is every seed's
// schedule, so a draw added later takes a place after every other (the
// largest place plus one), and moving one moves them
// (TestEverySeedDrawsItsGoldenSchedule in package gen;
// TestEveryDrawHasAPlaceOfItsOwn says which place is free).
type DrawAt struct {
	Place int
	Draw  func(d Drawer, s *Schedule, st *drawState)
}

// swarmDraw is the swarm's flags, the one draw of no axis: before any
// fault.
var swarmDraw = DrawAt{2, drawSwarm}

// sinkDraws are a sink schedule's draws in their order: the swarm's and
// every registered axis's, by place.
func sinkDraws() []DrawAt {
	draws := []DrawAt{swarmDraw}
	for _, a := range Axes {
		draws = append(draws, a.Draws()...)
	}
	slices.SortStableFunc(draws, func(a, b DrawAt) int { return cmp.Compare(a.Place, b.Place) })
	return draws
}

// drawOrder is sinkDraws, made once.
var drawOrder = sinkDraws()

// DrawSink draws a sink schedule of one of policies. rapid shrinks each
// choice toward its first, smallest or absent value, so a shrunk
// schedule has the fewest threads, calls and faults and the smallest
// sizes that still fail.
func DrawSink(d Drawer, policies []string) Schedule {
	s := Schedule{Kind: KindSink, Policy: pick(d, policies, "policy"), Sink: &Sink{}}
	st := &drawState{}
	for _, step := range drawOrder {
		if st.done {
			break
		}
		step.Draw(d, &s, st)
	}
	return s
}
