package schedule

import (
	"strings"
	"testing"
)

// forkSchedule is one call of 4 lines, then a fork, fd 2 a file.
func forkSchedule(f Fork) Schedule {
	call := Call{Lines: 4, Size: 80, Level: "I"}
	return Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &Sink{FD2: FD2{Kind: FD2File}, Stderr: Stderr{Kind: StderrOriginal}, Threads: []Thread{{Calls: []Call{call}}},
			ForkPart: ForkPart{Fork: &f}}}
}

func TestForkAxisRules(t *testing.T) {
	if err := forkSchedule(Fork{Held: true, Lines: 4}).Validate(); err != nil {
		t.Fatalf("a fork with the sink's locks held: %v", err)
	}
	if err := forkSchedule(Fork{Held: true, Lines: 4}).InContract(); err != nil {
		t.Fatalf("a fork with the sink's locks held: outside the contract: %v", err)
	}
	for name, tc := range map[string]struct {
		change func(k *Sink)
		want   string
	}{
		"too many lines":  {func(k *Sink) { k.Fork.Lines = 65 }, "fork lines 65"},
		"negative lines":  {func(k *Sink) { k.Fork.Lines = -1 }, "fork lines -1"},
		"a forwarder":     {func(k *Sink) { k.FD2 = FD2{Kind: FD2Wurlitzer, Capacity: 4096, Chunk: 1024} }, "fork with fd2 wurlitzer"},
		"stderr replaced": {func(k *Sink) { k.Stderr = Stderr{Kind: StderrCaptured} }, "fork with stderr captured"},
		"an abort":        {func(k *Sink) { k.Abort = &Abort{Fatal: true, After: 1} }, "fork with an abort"},
	} {
		s := forkSchedule(Fork{Lines: 1})
		tc.change(s.Sink)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, tc.want)
		}
	}
}

func TestForkAxisStepsAndCounts(t *testing.T) {
	s := forkSchedule(Fork{Held: true, Lines: 16})
	if got, want := s.Lines(), 4+16; got != want {
		t.Errorf("Lines: %d, want %d (the call's and the child's)", got, want)
	}
	if got, want := s.Faults(), 3; got != want {
		t.Errorf("Faults: %d, want %d (the call, the fork, the locks held)", got, want)
	}
	steps := map[string]Step{}
	for _, st := range s.Steps() {
		steps[st.What+st.Key] = st
	}
	for _, want := range []string{"no fork", "fork lines", "fork with nothing held"} {
		if _, ok := steps[want]; !ok {
			t.Fatalf("no step %q among %v", want, steps)
		}
	}
	for what, smaller := range map[string]func(k *Sink) bool{
		"no fork":                func(k *Sink) bool { return k.Fork == nil },
		"fork with nothing held": func(k *Sink) bool { return k.Fork != nil && !k.Fork.Held && k.Fork.Lines == 16 },
	} {
		c := s
		c.Sink = cloneSink(s.Sink)
		steps[what].Apply(&c)
		if err := c.Validate(); err != nil || !smaller(c.Sink) || c.Faults() >= s.Faults() {
			t.Errorf("step %q: %+v (valid: %v), not one change smaller", what, c.Sink.Fork, err)
		}
	}
	c := s
	c.Sink = cloneSink(s.Sink)
	steps["fork lines"].Set(&c, 1)
	if c.Sink.Fork.Lines != 1 || c.Lines() != 5 {
		t.Errorf("fork lines -> 1: %+v", c.Sink.Fork)
	}
}
