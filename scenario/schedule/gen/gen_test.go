package gen

import (
	"testing"

	"pgregory.net/rapid"

	. "logjam/scenario/schedule"
)

// Every drawn schedule is valid, inside the generator's own bounds, its
// failpoints pass the catalogue's validator, and it survives a round trip
// through both of its encodings.
func TestDrawnSchedulesAreValidAndRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Schedules(Filter{}).Draw(t, "schedule")
		if err := s.Validate(); err != nil {
			t.Fatalf("drawn schedule invalid: %v\n%s", err, s.JSON())
		}
		if err := s.Failpoints().Validate(); err != nil {
			t.Fatalf("failpoints: %v", err)
		}
		for _, raw := range []string{s.Encode(), string(s.JSON())} {
			back, err := Decode(raw)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if string(back.JSON()) != string(s.JSON()) {
				t.Fatalf("round trip changed it:\n%s\n%s", s.JSON(), back.JSON())
			}
		}
	})
}

// The contract's edges hold in every drawn schedule (docs/CONTRACT.md).
func TestDrawnSchedulesStayInsideTheContract(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Schedules(Filter{Kind: KindSink}).Draw(t, "schedule")
		k := s.Sink
		captured := k.FD2.Kind == FD2IPyKernel || k.FD2.Kind == FD2Wurlitzer
		if k.Abort != nil {
			if k.Daemons > 0 || k.Outside > 0 || k.Threads[0].Outside > 0 {
				t.Fatalf("an abort with daemons or the main thread's lines outside a call: %s", s.JSON())
			}
			if captured && (!k.Abort.Fatal || len(k.Threads) != 1 || len(k.Threads[0].Calls) != 1 || k.Sigint != "" || k.FD2.Errors != nil) {
				t.Fatalf("an abort on a forwarder's pipe other than a Fatal line in one thread's only call: %s", s.JSON())
			}
			if len(k.Threads) > 1 && k.Stderr.Kind != StderrOriginal {
				t.Fatalf("an abort with other threads and sys.stderr replaced: %s", s.JSON())
			}
			if !k.Abort.Fatal && (k.Stderr.Kind != StderrOriginal || k.FD2.StallMs > 0 && k.Abort.After < 1) {
				t.Fatalf("a foreign abort outside the contract: %s", s.JSON())
			}
			if k.Stderr.Kind != StderrOriginal && len(k.Threads[0].Calls) != 1 {
				t.Fatalf("an abort with sys.stderr in memory after earlier calls: %s", s.JSON())
			}
		}
		if k.Stderr.How == "half" && (len(k.Threads) != 1 || len(k.Threads[0].Calls) != 1 || k.Daemons > 0 || k.Outside > 0) {
			t.Fatalf("a half-written stream written again: %s", s.JSON())
		}
		if k.Daemons > 0 && (k.Stderr.Kind == StderrSlow || k.Stderr.Kind == StderrSignalWait) {
			t.Fatalf("a daemon frozen in a write that released the GIL: %s", s.JSON())
		}
		if err := s.InContract(); err != nil {
			t.Fatalf("%v: %s", err, s.JSON())
		}
	})
}

func TestTheSameSeedDrawsTheSameSchedule(t *testing.T) {
	for seed := 1; seed < 50; seed++ {
		a, b := Schedules(Filter{}).Example(seed), Schedules(Filter{}).Example(seed)
		if string(a.JSON()) != string(b.JSON()) {
			t.Fatalf("seed %d: two schedules", seed)
		}
	}
}

func TestAFilterDrawsOnlyItsPolicies(t *testing.T) {
	f := Filter{Policies: []string{"logjam", "fixed"}}
	for seed := 1; seed < 200; seed++ {
		if p := Schedules(f).Example(seed).Column(); p != "logjam" && p != "fixed" {
			t.Fatalf("seed %d drew policy %s", seed, p)
		}
	}
	if err := (Filter{Kind: KindLazyInit, Policies: []string{"logjam"}}).Check(); err == nil {
		t.Error("a sink policy for a lazyinit schedule was accepted")
	}
}

// Aborts with several threads are drawn (docs/CONTRACT.md, "Fatal and
// abort with several threads"), foreign ones too, and other threads' lines
// outside a call before a Fatal line; a schedule with no abort draws as it
// did before the axis (nothing is drawn after it).
func TestAbortsWithSeveralThreadsAreDrawn(t *testing.T) {
	var fatal, foreign, outside int
	for seed := 1; seed <= 400; seed++ {
		k := Schedules(Filter{Kind: KindSink}).Example(seed).Sink
		if k.Abort == nil || len(k.Threads) < 2 {
			continue
		}
		if k.Abort.Fatal {
			fatal++
		} else {
			foreign++
		}
		for _, th := range k.Threads[1:] {
			if th.Outside > 0 {
				outside++
				break
			}
		}
	}
	if fatal == 0 || foreign == 0 || outside == 0 {
		t.Errorf("400 seeds: %d Fatal and %d foreign aborts with several threads, %d with another thread's lines outside a call", fatal, foreign, outside)
	}
	t.Logf("400 seeds: %d Fatal and %d foreign aborts with several threads, %d with another thread's lines outside a call", fatal, foreign, outside)
}

// Swarm testing (schedule's draw.go, swarm): a run leaves whole axes out, so runs of
// several calls with no switch point, no raising call, no nested call and
// no odd text in any call are common, and so are runs with each of them.
func TestSwarmLeavesAxesOut(t *testing.T) {
	var bare, switches, fails, nested, text int
	for seed := 1; seed <= 400; seed++ {
		k := Schedules(Filter{Kind: KindSink}).Example(seed).Sink
		calls, odd := 0, false
		for _, th := range k.Threads {
			for _, c := range th.Calls {
				calls++
				if c.WaitFor > 0 {
					switches++
				}
				if c.Fails {
					fails++
				}
				if c.Nested != nil {
					nested++
				}
				if c.CJK || c.Invalid > 0 {
					text++
				}
				odd = odd || c.WaitFor > 0 || c.Fails || c.Nested != nil || c.CJK || c.Invalid > 0
			}
		}
		if calls >= 3 && !odd {
			bare++
		}
	}
	if bare < 20 || switches == 0 || fails == 0 || nested == 0 || text == 0 {
		t.Errorf("400 seeds: %d runs of 3 calls or more with none of the per-call axes; calls with a switch point %d, raising %d, nested %d, odd text %d", bare, switches, fails, nested, text)
	}
	t.Logf("400 seeds: %d runs of 3 calls or more with none of the per-call axes; calls with a switch point %d, raising %d, nested %d, odd text %d", bare, switches, fails, nested, text)
}

// Forks are drawn (axis fork), with the sink's locks held and without,
// and some after lines the main thread logged outside any call (what
// logjam may keep process-wide at the fork).
func TestForksAreDrawn(t *testing.T) {
	var forks, held, afterOutside int
	for seed := 1; seed <= 400; seed++ {
		k := Schedules(Filter{Kind: KindSink}).Example(seed).Sink
		if k.Fork == nil {
			continue
		}
		forks++
		held += b2i(k.Fork.Held)
		afterOutside += b2i(k.Outside > 0)
	}
	if forks == 0 || held == 0 || held == forks || afterOutside == 0 {
		t.Errorf("400 seeds: %d forks, %d with the sink's locks held, %d after lines outside a call", forks, held, afterOutside)
	}
	t.Logf("400 seeds: %d forks, %d with the sink's locks held, %d after lines outside a call", forks, held, afterOutside)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
