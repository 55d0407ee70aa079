package schedule

// A Drawer is where an axis's draw gets its choices (package gen gives
// rapid's; this package never imports rapid, so that the child, which
// decodes schedules and never draws one, does not link it). Each choice
// is labelled for rapid's failure output.
type Drawer interface {
	Bool(label string) bool
	IntRange(lo, hi int, label string) int
	SampledFrom(choices []int, label string) int
}

// drawnAxis is an axis whose draw lives in its own file: package gen calls
// each, in the order of Axes, after the fixed sequence of the older axes'
// draws (gen.drawSink), so that a seed's schedule keeps every part those
// drew. A draw leaves the schedule valid and inside the contract.
type drawnAxis interface {
	Draw(d Drawer, s *Schedule)
}

// DrawAxes draws every axis that draws itself into s (a sink schedule
// the fixed sequence has drawn).
func DrawAxes(d Drawer, s *Schedule) {
	for _, a := range Axes {
		if da, ok := a.(drawnAxis); ok {
			da.Draw(d, s)
		}
	}
}
