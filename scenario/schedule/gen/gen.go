// Package gen draws random fault schedules (package schedule) with
// pgregory.net/rapid. It is apart from package schedule only so that the
// child (cmd/simrt), which decodes schedules and never draws one, does
// not link rapid: its package initialisation was about a fifth of a
// small run's CPU time (docs/RANDOM.md, "Shrinking"). The draws
// themselves are the schedule package's (schedule.DrawSink, each axis's
// in its own file); this package picks the kind and gives them rapid's
// choices.
package gen

import (
	"slices"

	"pgregory.net/rapid"

	"logjam/scenario/schedule"
)

// Schedules draws schedules that lie inside logjam's contract (docs/CONTRACT.md)
// or on its edge. rapid shrinks each choice toward its first, smallest or
// absent value, so a shrunk schedule has the fewest threads, calls and
// faults and the smallest sizes that still fail.
func Schedules(f schedule.Filter) *rapid.Generator[schedule.Schedule] {
	return rapid.Custom(func(t *rapid.T) schedule.Schedule { return Draw(t, f) })
}

// Draw draws one schedule: a sink schedule four times in five, when the
// filter leaves both kinds.
func Draw(t *rapid.T, f schedule.Filter) schedule.Schedule {
	sinks, lazies := schedule.SinkPolicies, schedule.LazyVariants
	if len(f.Policies) > 0 {
		sinks = slices.DeleteFunc(slices.Clone(f.Policies), func(p string) bool { return !slices.Contains(schedule.SinkPolicies, p) })
		lazies = slices.DeleteFunc(slices.Clone(f.Policies), func(p string) bool { return !slices.Contains(schedule.LazyVariants, p) })
	}
	kind := f.Kind
	switch {
	case kind != "":
	case len(lazies) == 0:
		kind = schedule.KindSink
	case len(sinks) == 0:
		kind = schedule.KindLazyInit
	case rapid.IntRange(0, 9).Draw(t, "lazyinit?") < 8:
		kind = schedule.KindSink
	default:
		kind = schedule.KindLazyInit
	}
	if kind == schedule.KindLazyInit {
		return schedule.DrawLazy(drawer{t}, lazies)
	}
	return schedule.DrawSink(drawer{t}, sinks)
}

// drawer is rapid's choices for the schedule package's draws
// (schedule.Drawer).
type drawer struct{ t *rapid.T }

func (d drawer) Bool(label string) bool { return rapid.Bool().Draw(d.t, label) }

func (d drawer) IntRange(lo, hi int, label string) int {
	return rapid.IntRange(lo, hi).Draw(d.t, label)
}

// Index is rapid.SampledFrom of n choices: rapid draws the index alone,
// whatever the choices' type, so a SampledFrom of any slice of n draws
// the same.
func (d drawer) Index(n int, label string) int {
	return rapid.SampledFrom(indexes(n)).Draw(d.t, label)
}

func (d drawer) Indexes(n, lo, hi int, label string) []int {
	return rapid.SliceOfN(rapid.SampledFrom(indexes(n)), lo, hi).Draw(d.t, label)
}

// indexes are 0 to n-1.
func indexes(n int) []int {
	is := make([]int, n)
	for i := range is {
		is[i] = i
	}
	return is
}
