package schedule

import (
	"strings"
	"testing"
)

// poolSchedule is one call of 4 lines with a pool of two workers, fd 2 a
// file.
func poolSchedule(p Pool) Schedule {
	call := Call{Lines: 4, Size: 80, Level: "I", PoolWork: PoolWork{Pool: &p}}
	return Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &Sink{FD2: FD2{Kind: FD2File}, Stderr: Stderr{Kind: StderrOriginal}, Threads: []Thread{{Calls: []Call{call}}}}}
}

func TestPoolAxisRules(t *testing.T) {
	if err := poolSchedule(Pool{Workers: 2, Lines: 8}).Validate(); err != nil {
		t.Fatalf("a pool of two: %v", err)
	}
	for name, tc := range map[string]struct {
		p    Pool
		want string
	}{
		"no worker":      {Pool{Workers: 0, Lines: 1}, "pool workers 0"},
		"five workers":   {Pool{Workers: 5, Lines: 1}, "pool workers 5"},
		"too many lines": {Pool{Workers: 1, Lines: 257}, "pool lines 257"},
		"negative lines": {Pool{Workers: 1, Lines: -1}, "pool lines -1"},
	} {
		if err := poolSchedule(tc.p).Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, tc.want)
		}
	}
	nested := poolSchedule(Pool{Workers: 1, Lines: 1})
	c := &nested.Sink.Threads[0].Calls[0]
	c.Nested = &Call{Lines: 1, Size: 8, Level: "I", PoolWork: PoolWork{Pool: &Pool{Workers: 1, Lines: 1}}}
	if err := nested.Validate(); err == nil || !strings.Contains(err.Error(), "nested call with a pool") {
		t.Errorf("a nested call's pool: %v", err)
	}
}

// TestPoolAxisContractEdges: a worker's lines are lines outside any call;
// logjam keeps them process-wide when fd 2 has no room, and those die with
// a foreign abort or meet a stall at the abort, or a replaced sys.stderr's
// capture dies with the process.
func TestPoolAxisContractEdges(t *testing.T) {
	s := poolSchedule(Pool{Workers: 2, Lines: 8})
	if err := s.InContract(); err != nil {
		t.Fatalf("a pool, no abort: %v", err)
	}
	fatal := s
	fatal.Sink = cloneSink(s.Sink)
	fatal.Sink.Abort = &Abort{Fatal: true, After: 1}
	if err := fatal.InContract(); err != nil {
		t.Errorf("a pool before a Fatal line: %v", err)
	}
	for name, change := range map[string]func(k *Sink){
		"foreign abort": func(k *Sink) { k.Abort = &Abort{After: 1} },
		"stall at abort": func(k *Sink) {
			k.Abort = &Abort{Fatal: true, After: 1}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}}
		},
		"replaced, abort": func(k *Sink) { k.Abort = &Abort{Fatal: true, After: 1}; k.Stderr = Stderr{Kind: StderrCaptured} },
	} {
		c := s
		c.Sink = cloneSink(s.Sink)
		change(c.Sink)
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: invalid: %v", name, err)
		}
		if err := c.InContract(); err == nil || !strings.Contains(err.Error(), "pool workers") {
			t.Errorf("%s: %v, want the pool's edge", name, err)
		}
	}
}

func TestPoolAxisStepsAndCounts(t *testing.T) {
	s := poolSchedule(Pool{Workers: 3, Lines: 8})
	if got, want := s.Lines(), 4+3*8; got != want {
		t.Errorf("Lines: %d, want %d (the call's and every worker's)", got, want)
	}
	if got, want := s.Faults(), 2; got != want {
		t.Errorf("Faults: %d, want %d (the call, its pool)", got, want)
	}
	seen := map[string]bool{}
	for _, st := range s.Steps() {
		seen[st.What+st.Key] = true
	}
	for _, want := range []string{"call 0.0 pool", "pool lines 0.0", "call 0.0 pool of one"} {
		if !seen[want] {
			t.Errorf("no step %q among %v", want, seen)
		}
	}
}

func cloneSink(k *Sink) *Sink {
	s, err := Decode(string(Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12", Sink: k}.JSON()))
	if err != nil {
		panic(err)
	}
	return s.Sink
}
