package schedule

import (
	"strings"
	"testing"
)

// crashSchedule is one call that logs nothing, then 8 lines outside any call
// with sys.stderr captured, the crash at the given one; fd 2 a file.
func crashSchedule(at int) Schedule {
	call := Call{Lines: 0, Size: 80, Level: "I"}
	return Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &Sink{FD2: FD2{Kind: FD2File}, Stderr: Stderr{Kind: StderrCaptured}, Threads: []Thread{{Calls: []Call{call}}},
			OutsideCalls: OutsideCalls{Outside: 8}, CrashPart: CrashPart{Crash: &Crash{At: at}}}}
}

func TestCrashAxisRules(t *testing.T) {
	s := crashSchedule(2)
	if err := s.Validate(); err != nil {
		t.Fatalf("a crash at the 2nd line outside a call: %v", err)
	}
	if err := s.InContract(); err != nil {
		t.Fatalf("a crash at the 2nd line outside a call: outside the contract: %v", err)
	}
	for name, tc := range map[string]struct {
		change func(k *Sink)
		want   string
	}{
		"at 0":       {func(k *Sink) { k.Crash.At = 0 }, "crash at line 0"},
		"past lines": {func(k *Sink) { k.Crash.At = 9 }, "crash at line 9"},
		"an abort":   {func(k *Sink) { k.Abort = &Abort{Fatal: true, After: 1} }, "crash with an abort"},
	} {
		s := crashSchedule(2)
		tc.change(s.Sink)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, tc.want)
		}
	}
	for name, tc := range map[string]struct {
		change func(k *Sink)
		want   string
	}{
		"a stall":                                {func(k *Sink) { k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096}; k.FD2.StallMs = 200 }, "a crash with fd 2 stalled"},
		"a forwarder":                            {func(k *Sink) { k.FD2 = FD2{Kind: FD2Wurlitzer, Capacity: 4096, Chunk: 1024} }, "a crash with fd 2 wurlitzer"},
		"a ctrl-c":                               {func(k *Sink) { k.Sigint = SigintLine }, "a crash with a Ctrl-C"},
		"daemons":                                {func(k *Sink) { k.Daemons = 2 }, "a crash with daemons"},
		"calls that logged, sys.stderr captured": {func(k *Sink) { k.Threads[0].Calls[0].Lines = 1 }, "a crash with sys.stderr replaced after calls that logged"},
		"another thread's line outside a call, sys.stderr captured": {func(k *Sink) { k.Threads = append(k.Threads, Thread{Outside: 1}) }, "a crash with sys.stderr replaced and a thread's lines outside a call before an outermost exit"},
		"the main thread's line outside a call, another thread's call after it": {func(k *Sink) {
			k.Threads[0].Outside = 1
			k.Threads = append(k.Threads, Thread{Calls: []Call{{Size: 80, Level: "I"}}})
		}, "a crash with sys.stderr replaced and a thread's lines outside a call before an outermost exit"},
	} {
		s := crashSchedule(2)
		tc.change(s.Sink)
		if err := s.Validate(); err != nil {
			t.Errorf("%s: the schedule is not valid (%v): the edge is not tested", name, err)
			continue
		}
		if err := s.InContract(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want the edge %q", name, err, tc.want)
		}
	}
}

func TestCrashAxisSteps(t *testing.T) {
	s := crashSchedule(5)
	steps := map[string]Step{}
	for _, st := range s.Steps() {
		steps[st.What+st.Key] = st
	}
	for _, want := range []string{"no crash", "crash at"} {
		if _, ok := steps[want]; !ok {
			t.Fatalf("no step %q among %v", want, steps)
		}
	}
	c := s
	c.Sink = cloneSink(s.Sink)
	steps["no crash"].Apply(&c)
	if c.Sink.Crash != nil || c.Validate() != nil || c.Faults() >= s.Faults() {
		t.Errorf("no crash: %+v, not one change smaller", c.Sink.Crash)
	}
	c = s
	c.Sink = cloneSink(s.Sink)
	steps["crash at"].Set(&c, 1)
	if c.Sink.Crash.At != 1 || c.Validate() != nil {
		t.Errorf("crash at -> 1: %+v", c.Sink.Crash)
	}
}
