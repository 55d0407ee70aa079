package schedule

import "fmt"

// OutsideCalls are lines a destructor logs outside any call, GIL held,
// after the threads are joined, with OutsideText's text (nil: 128 ASCII
// bytes, as schedules before the field was added). The outside axis also
// owns each thread's own Thread.Outside and Thread.OutsideText.
type OutsideCalls struct {
	Outside     int   `json:"outside,omitempty"`
	OutsideText *Text `json:"outside_text,omitempty"`
}

// Text is a line's text class: Size message bytes, three-byte characters
// after a one-byte prefix (CJK), an invalid byte at byte Invalid (1-based;
// 0: none), as a call's lines have.
type Text struct {
	Size    int  `json:"size"`
	CJK     bool `json:"cjk,omitempty"`
	Invalid int  `json:"invalid,omitempty"`
}

// outsideAxis is what is logged outside any call: Sink.OutsideCalls and
// each thread's own lines after its calls.
type outsideAxis struct{ noAxisPart }

func (outsideAxis) Name() string { return "outside" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a outsideAxis) Draws() []DrawAt { return []DrawAt{{14, a.draw}} }

// Parts: OutsideCalls (and each thread's own Outside, a part of the
// threads axis's Thread).
func (outsideAxis) Parts(k *Sink) []any { return []any{&k.OutsideCalls} }

func (outsideAxis) Words(s Schedule) []string {
	if n := s.Sink.outsideLines(); n > 0 {
		return []string{Plural(n, "line") + " outside a call"}
	}
	return nil
}

func (outsideAxis) Validate(k *Sink) error {
	if k.Outside < 0 || k.Outside > 512 {
		return fmt.Errorf("outside %d (accepted: 0 to 512)", k.Outside)
	}
	if err := k.OutsideText.validate(); err != nil {
		return err
	}
	for i, t := range k.Threads {
		if t.Outside < 0 || t.Outside > 512 {
			return fmt.Errorf("thread %d: outside %d (accepted: 0 to 512)", i, t.Outside)
		}
		if err := t.OutsideText.validate(); err != nil {
			return fmt.Errorf("thread %d: %w", i, err)
		}
	}
	return nil
}

func (t *Text) validate() error {
	switch {
	case t == nil:
		return nil
	case t.Size < 1 || t.Size > 2048:
		return fmt.Errorf("outside_text size %d (accepted: 1 to 2048)", t.Size)
	case t.Invalid < 0 || t.Invalid > t.Size:
		return fmt.Errorf("outside_text invalid %d (accepted: 0 to size)", t.Invalid)
	}
	return nil
}

func (outsideAxis) Faults(k *Sink) int {
	n := b2i(k.Outside > 0) + k.OutsideText.faults()
	for _, t := range k.Threads {
		n += b2i(t.Outside > 0) + t.OutsideText.faults()
	}
	return n
}

// faults counts a text class's faults: multi-byte text, an invalid byte.
func (t *Text) faults() int {
	if t == nil {
		return 0
	}
	return b2i(t.CJK) + b2i(t.Invalid > 0)
}

// size is a line's message size in this text class (nil: the 128 ASCII
// bytes of a line outside a call with no text class).
func (t *Text) size() int {
	if t == nil {
		return 128
	}
	return t.Size
}

// lineRuns: the lines outside a call, each thread's.
func (outsideAxis) lineRuns(k *Sink, fn func(lines, size int)) {
	fn(k.Outside, k.OutsideText.size())
	for _, t := range k.Threads {
		fn(t.Outside, t.OutsideText.size())
	}
}

func (outsideAxis) mostLines(k *Sink) int {
	most := k.Outside
	for _, t := range k.Threads {
		most = max(most, t.Outside)
	}
	return most
}

func (outsideAxis) capLines(k *Sink, m int) {
	k.Outside = min(k.Outside, m)
	for i := range k.Threads {
		k.Threads[i].Outside = min(k.Threads[i].Outside, m)
	}
}

func (outsideAxis) Steps(s Schedule) []Step {
	var steps []Step
	texts := func(what string, at func(c *Schedule) **Text) {
		if *at(&s) == nil {
			return
		}
		steps = append(steps,
			change(PhasePart, what+" text", func(c *Schedule) { *at(c) = nil }),
			change(PhasePart, what+" multi-byte", func(c *Schedule) { (*at(c)).CJK = false }),
			change(PhasePart, what+" invalid bytes", func(c *Schedule) { (*at(c)).Invalid = 0 }))
	}
	steps = append(steps, count(PhasePart, "outside", s.Sink.Outside, func(c *Schedule, n int) { c.Sink.Outside = n }))
	texts("outside", func(c *Schedule) **Text { return &c.Sink.OutsideText })
	for i, t := range s.Sink.Threads {
		steps = append(steps, count(PhasePart, fmt.Sprintf("outside %d", i), t.Outside, func(c *Schedule, n int) { c.Sink.Threads[i].Outside = n }))
		texts(fmt.Sprintf("outside %d", i), func(c *Schedule) **Text { return &c.Sink.Threads[i].OutsideText })
	}
	return steps
}

// outsideLines counts the lines logged outside any call, by every thread.
func (k *Sink) outsideLines() int {
	n := k.Outside
	for _, t := range k.Threads {
		n += t.Outside
	}
	return n
}

// draw: with no abort, lines outside a call at the end, then each
// thread's, after its calls (a destructor at the end of its function, GIL
// held), each with its text class.
func (outsideAxis) draw(d Drawer, s *Schedule, st *drawState) {
	k := s.Sink
	if k.Abort != nil {
		return
	}
	k.Outside = pick(d, []int{0, 0, 8, 128}, "outside")
	if k.Outside > 0 {
		k.OutsideText = drawText(d, st.sw)
	}
	for i := range k.Threads {
		k.Threads[i].Outside = pick(d, []int{0, 0, 0, 1, 8}, "thread outside")
		if k.Threads[i].Outside > 0 {
			k.Threads[i].OutsideText = drawText(d, st.sw)
		}
	}
}

// drawText draws the text class of lines outside a call: nil (128 ASCII
// bytes) or a size around a cut, three-byte characters, an invalid byte.
func drawText(d Drawer, sw swarm) *Text {
	if d.IntRange(0, 3, "plain outside text?") == 0 {
		return nil
	}
	x := &Text{Size: max(1, pick(d, sizeBases, "outside size base")+d.IntRange(-3, 3, "outside size delta"))}
	x.CJK = sw.cjk && d.IntRange(0, 2, "outside cjk?") == 0
	if sw.invalid && d.IntRange(0, 2, "outside invalid?") == 0 {
		x.Invalid = d.IntRange(1, x.Size, "outside invalid at")
	}
	return x
}
