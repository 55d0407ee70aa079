package schedule

import (
	"strings"
	"testing"
)

// forwarderFatal is F6 as a schedule: one call of 3 lines ending in a
// Fatal line, fd 2 wurlitzer's pipe.
func forwarderFatal() Schedule {
	return Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &Sink{FD2: FD2{Kind: FD2Wurlitzer, Capacity: 4096, Chunk: 1024}, Stderr: Stderr{Kind: StderrOriginal},
			Threads: []Thread{{Calls: []Call{{Lines: 3, Size: 80, Level: "E"}}}}, Abort: &Abort{Fatal: true}}}
}

func TestForwarderFatalAxisRules(t *testing.T) {
	if err := forwarderFatal().Validate(); err != nil {
		t.Fatalf("F6 as a schedule: %v", err)
	}
	if err := forwarderFatal().InContract(); err != nil {
		t.Fatalf("F6 as a schedule lies outside the contract: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(k *Sink)
		want string
	}{
		"a foreign abort":      {func(k *Sink) { k.Abort.Fatal = false }, "a foreign abort with fd 2 wurlitzer"},
		"another thread":       {func(k *Sink) { k.Threads = append(k.Threads, Thread{Outside: 1}) }, "with other threads"},
		"a daemon":             {func(k *Sink) { k.Daemons = 1 }, "with other threads"},
		"an earlier call":      {func(k *Sink) { k.Threads[0].Calls = append(k.Threads[0].Calls, k.Threads[0].Calls[0]) }, "after lines outside the aborting call"},
		"lines outside a call": {func(k *Sink) { k.Outside = 2 }, "after lines outside the aborting call"},
		"a pool":               {func(k *Sink) { k.Threads[0].Calls[0].Pool = &Pool{Workers: 1, Lines: 1} }, "after lines outside the aborting call"},
		"a SIGINT":             {func(k *Sink) { k.Sigint = SigintLine }, "with a SIGINT or refused writes"},
		"refused writes":       {func(k *Sink) { k.FD2.Errors = &FD2Errors{} }, "with a SIGINT or refused writes"},
	} {
		s := forwarderFatal()
		tc.edit(s.Sink)
		if err := (forwarderFatalAxis{}).InContract(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal naming %q", name, err, tc.want)
		}
	}
}

// fixedDrawer answers every draw with the lowest choice (a Bool false).
type fixedDrawer struct{}

func (fixedDrawer) Bool(string) bool                     { return false }
func (fixedDrawer) IntRange(lo, _ int, _ string) int     { return lo }
func (fixedDrawer) Index(int, string) int                { return 0 }
func (fixedDrawer) Indexes(_, lo, _ int, _ string) []int { return make([]int, lo) }

func TestForwarderFatalAxisDrawsInsideTheContractOnly(t *testing.T) {
	s := forwarderFatal()
	s.Sink.FD2 = FD2{Kind: FD2File}
	forwarderFatalAxis{}.draw(fixedDrawer{}, &s, nil)
	if s.Sink.FD2.Kind != FD2Wurlitzer || s.InContract() != nil {
		t.Fatalf("a Fatal line's one call on fd 2 a file was not moved onto a forwarder's pipe inside the contract: %+v (%v)", s.Sink.FD2, s.InContract())
	}
	s = forwarderFatal()
	s.Sink.FD2 = FD2{Kind: FD2File}
	s.Sink.Threads = append(s.Sink.Threads, Thread{Outside: 1})
	s.Sink.Threads[0].Calls = append([]Call{{Lines: 9, Size: 80, Level: "I"}}, s.Sink.Threads[0].Calls...)
	s.Sink.Daemons = 2
	forwarderFatalAxis{}.draw(fixedDrawer{}, &s, nil)
	if k := s.Sink; k.FD2.Kind != FD2Wurlitzer || len(k.Threads) != 1 || len(k.Threads[0].Calls) != 1 || k.Threads[0].Calls[0].Lines != 3 || k.Daemons != 0 || s.InContract() != nil {
		t.Fatalf("the draw did not cut the run to the main thread's aborting call on a forwarder's pipe: %s (%v)", s.JSON(), s.InContract())
	}
	s = forwarderFatal()
	s.Sink.FD2 = FD2{Kind: FD2File}
	s.Sink.Abort.Fatal = false
	forwarderFatalAxis{}.draw(fixedDrawer{}, &s, nil)
	if s.Sink.FD2.Kind != FD2File {
		t.Fatalf("the draw put a foreign abort on a forwarder's pipe, outside the contract: %+v", s.Sink.FD2)
	}
}
