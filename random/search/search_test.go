package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"logjam/scenario/schedule"
	"logjam/verdict"
)

func TestClassNamesTheKnownFailures(t *testing.T) {
	s := schedule.Schedule{Kind: schedule.KindSink, Policy: "pystderr", Platform: "linux",
		Sink: &schedule.Sink{FD2: schedule.FD2{Kind: schedule.FD2Pipe, Stalling: schedule.Stalling{StallMs: 200}}, Abort: &schedule.Abort{After: 1}}}
	if c := Class(s, verdict.Hang, "deadlock: thread A holds the GIL and xnnpack workspace lock ..."); c != "pystderr HANG (gil+backend-lock)" {
		t.Errorf("got %q", c)
	}
	if c := Class(s, verdict.Lost, ""); c != "pystderr LOST (stall+abort)" {
		t.Errorf("got %q", c)
	}
	two := s
	k := *s.Sink
	k.Threads = []schedule.Thread{{}, {}}
	two.Sink = &k
	if c := Class(two, verdict.Hang, "deadlock: thread MainThread holds the GIL and xnnpack workspace lock and waits for the stdio lock of stderr (held by T1); thread T1 holds the stdio lock of stderr and waits for the GIL (held by MainThread)"); c != "pystderr HANG (gil+stdio-lock,threads at the abort)" {
		t.Errorf("got %q", c)
	}
	s.Platform = "macos"
	if c := Class(s, verdict.Hang, "thread M waits for room on fd 2 (a pipe)"); c != "pystderr HANG (pipe,macos)" {
		t.Errorf("got %q", c)
	}
}

// A fake failure (fd 2 a pipe or a pty, an invalid byte in some call, at
// least 10 lines in all) shrinks to a 1-minimal schedule that still fails,
// inside the contract, the same way twice.
func TestShrinkIsOneMinimalAndDeterministic(t *testing.T) {
	fails := func(s schedule.Schedule) bool {
		if s.Sink == nil || s.Sink.FD2.Kind != schedule.FD2Pipe && s.Sink.FD2.Kind != schedule.FD2PTY || s.Lines() < 10 {
			return false
		}
		for _, th := range s.Sink.Threads {
			for _, c := range th.Calls {
				if c.Invalid > 0 {
					return true
				}
			}
		}
		return false
	}
	play := func(_ context.Context, s schedule.Schedule) (string, error) {
		if fails(s) {
			return "the bug", nil
		}
		return "", nil
	}
	shrunk := 0
	for seed := uint64(1); seed < 400 && shrunk < 20; seed++ {
		s := Draw(seed, schedule.Filter{Kind: schedule.KindSink})
		if !fails(s) {
			continue
		}
		shrunk++
		a, err := shrink(context.Background(), s, "the bug", 10000, play)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := shrink(context.Background(), s, "the bug", 10000, play)
		switch {
		case !a.Minimal:
			t.Errorf("seed %d: not 1-minimal after %d runs", seed, a.Runs)
		case !fails(a.Schedule):
			t.Errorf("seed %d: the shrunk schedule passes: %s", seed, a.Schedule.JSON())
		case a.Schedule.InContract() != nil:
			t.Errorf("seed %d: %v", seed, a.Schedule.InContract())
		case string(a.Schedule.JSON()) != string(b.Schedule.JSON()) || a.Runs != b.Runs:
			t.Errorf("seed %d: two shrinks differ:\n%s (%d runs)\n%s (%d runs)", seed, a.Schedule.JSON(), a.Runs, b.Schedule.JSON(), b.Runs)
		case a.Schedule.Lines() != 10:
			t.Errorf("seed %d: %d lines: %s", seed, a.Schedule.Lines(), a.Schedule.JSON())
		}
		for _, c := range Candidates(a.Schedule) {
			if fails(c) && string(c.JSON()) != string(a.Schedule.JSON()) {
				t.Errorf("seed %d: a single removal still fails: %s", seed, c.JSON())
				break
			}
		}
		t.Logf("seed %d: faults %d -> %d, %d runs", seed, s.Faults(), a.Schedule.Faults(), a.Runs)
	}
	if shrunk < 5 {
		t.Fatalf("only %d schedules drawn fail the fake bug", shrunk)
	}
}

// Candidates played ahead change nothing a shrink returns: at every
// depth, with children that end in a random order and a budget that runs
// out, the shrunk schedule, its steps, runs and weight are those of
// judging one candidate at a time, and each schedule is played at most
// once.
func TestShrinkAheadTakesTheSamePath(t *testing.T) {
	fails := func(s schedule.Schedule) bool {
		return s.Sink != nil && s.Lines() >= 3 && len(s.Sink.Threads) >= 2
	}
	shrunk, ahead := 0, 0 // ahead: children played that the path did not judge
	for seed := uint64(1); seed < 400 && shrunk < 12; seed++ {
		s := Draw(seed, schedule.Filter{Kind: schedule.KindSink})
		if !fails(s) {
			continue
		}
		shrunk++
		for _, budget := range []int{15, 10000} {
			var want Shrunk
			for _, depth := range []int{1, 2, 5, 16} {
				var mu sync.Mutex
				played := map[string]int{}
				rng := rand.New(rand.NewPCG(seed, uint64(depth)))
				play := func(ctx context.Context, c schedule.Schedule) (string, error) {
					mu.Lock()
					played[c.Encode()]++
					d := time.Duration(rng.IntN(300)) * time.Microsecond
					mu.Unlock()
					time.Sleep(d) // children end in any order
					if fails(c) {
						return "the bug", nil
					}
					return "", nil
				}
				got, err := shrinkAhead(context.Background(), s, "the bug", budget, play, depth)
				if err != nil {
					t.Fatal(err)
				}
				for enc, n := range played {
					if n > 1 {
						t.Fatalf("seed %d ahead %d: %s played %d times", seed, depth, enc, n)
					}
				}
				if depth == 1 {
					want = got
					continue
				}
				ahead += len(played) - got.Runs
				if string(got.Schedule.JSON()) != string(want.Schedule.JSON()) || got.Runs != want.Runs || got.Weight != want.Weight ||
					got.Minimal != want.Minimal || strings.Join(got.Steps, ", ") != strings.Join(want.Steps, ", ") {
					t.Fatalf("seed %d budget %d ahead %d: %d runs, %v; one at a time: %d runs, %v", seed, budget, depth, got.Runs, got.Steps, want.Runs, want.Steps)
				}
			}
		}
	}
	if shrunk < 5 || ahead == 0 {
		t.Fatalf("%d schedules drawn fail the fake bug, %d children played ahead", shrunk, ahead)
	}
	t.Logf("%d schedules shrunk, %d children played ahead", shrunk, ahead)
}

// A failure whose replays did not all show it again is FLAKY, with its
// replay count, and fails the search.
func TestFlakyNamesItsReplayCount(t *testing.T) {
	f := Flaky{Seed: 7, Failure: "fd2 HANG (pipe)", Got: []string{"fd2 HANG (pipe)", "fd2 BADESC"}, Reason: "did not finish within 10s", Other: "a line's escape is wrong"}
	if f.Agreed() != 1 || !strings.Contains(f.String(), "FLAKY: seed 7 fd2 HANG (pipe): 1 of 2 replays agreed (gave fd2 HANG (pipe); fd2 BADESC); the failing play: did not finish within 10s; the replay that differed: a line's escape is wrong") {
		t.Fatalf("got %q", f)
	}
	var b strings.Builder
	if n := PrintFlaky(&b, nil, schedule.Filter{}); n != 0 || b.Len() != 0 {
		t.Fatalf("no flaky: printed %q", b.String())
	}
	if n := PrintFlaky(&b, []Flaky{f}, schedule.Filter{}); n != 1 || !strings.Contains(b.String(), "1 FLAKY") || !strings.Contains(b.String(), "-seed 7") {
		t.Fatalf("printed %q", b.String())
	}
}

// A stall at a mark follows the thread or call it names when the shrinker
// removes another one, and goes with the one it names.
func TestShrinkCandidatesRenumberStalls(t *testing.T) {
	call := schedule.Call{Lines: 4, Size: 80, Level: "I"}
	s := schedule.Schedule{Kind: schedule.KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &schedule.Sink{FD2: schedule.FD2{Kind: schedule.FD2Pipe, Capacity: 4096, Stalling: schedule.Stalling{Stalls: []schedule.Stall{
			{At: schedule.StallAtLine, Thread: 2, Call: 1, Line: 3, Ms: 200}, {At: schedule.StallAtExit, Ms: 200}}}},
			Stderr:  schedule.Stderr{Kind: schedule.StderrOriginal},
			Threads: []schedule.Thread{{Calls: []schedule.Call{call}}, {Calls: []schedule.Call{call}}, {Calls: []schedule.Call{call, call}}}}}
	seen := map[string]bool{}
	for _, c := range Candidates(s) {
		k := c.Sink
		switch {
		case len(k.Threads) == 2 && len(k.Threads[1].Calls) == 2:
			seen["thread 1 removed"] = len(k.FD2.Stalls) == 2 && k.FD2.Stalls[0].Thread == 1 && k.FD2.Stalls[0].Call == 1
		case len(k.Threads) == 3 && len(k.Threads[2].Calls) == 1 && k.Threads[2].Calls[0].Lines == 4:
			seen["a call of thread 2 removed"] = true
			if len(k.FD2.Stalls) == 2 && k.FD2.Stalls[0].Call != 0 {
				t.Errorf("the stall names a call that no longer exists: %s", c.JSON())
			}
		case len(k.Threads) == 3 && len(k.FD2.Stalls) == 1 && k.FD2.Stalls[0].At == schedule.StallAtExit:
			seen["the stall removed"] = true
		}
	}
	for _, want := range []string{"thread 1 removed", "a call of thread 2 removed", "the stall removed"} {
		if !seen[want] {
			t.Errorf("no candidate with %s (and the stalls renumbered)", want)
		}
	}
}

// The whole hunt (search, replays, shrinks, what is printed) is a
// function of the verdicts: with a fake oracle whose plays end in a random
// order, one child at a time or eight give the same output, byte for byte.
func TestHuntPrintsTheSameWhateverTheTiming(t *testing.T) {
	// The fake bugs: a pipe-like fd 2 with an invalid byte in some call and
	// at least 6 lines is LOST; two threads or more with a daemon, HANG.
	oracle := func(s schedule.Schedule) (verdict.Verdict, string) {
		k := s.Sink
		if k == nil {
			return verdict.OK, ""
		}
		invalid := false
		for _, th := range k.Threads {
			for _, c := range th.Calls {
				invalid = invalid || c.Invalid > 0
			}
		}
		switch {
		case invalid && k.FD2.Kind != schedule.FD2File && s.Lines() >= 6:
			return verdict.Lost, s.Policy + " LOST: fake"
		case len(k.Threads) >= 2 && k.Daemons > 0:
			return verdict.Hang, s.Policy + " HANG: fake"
		}
		return verdict.OK, ""
	}
	output := func(procs int) string {
		var mu sync.Mutex
		rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(procs)))
		play := func(ctx context.Context, s schedule.Schedule) (Result, error) {
			mu.Lock()
			d := time.Duration(rnd.IntN(300)) * time.Microsecond
			mu.Unlock()
			time.Sleep(d) // the children end in any order
			v, cause := oracle(s)
			return Result{Schedule: s, Verdict: v, Class: s.Policy + " " + string(v), Cause: cause, Ms: int64(d / time.Microsecond)}, nil
		}
		f := schedule.Filter{Kind: schedule.KindSink}
		h := &hunt{play: play, slots: newSlots(procs)}
		results, findings, err := h.run(context.Background(), 150, 40, func(i int) (uint64, schedule.Schedule) {
			return SeedOf(1, i), Draw(SeedOf(1, i), f)
		})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		PrintTable(&b, results)
		if flaky := PrintFailures(&b, results, findings, f, 40, true); len(flaky) > 0 {
			t.Fatalf("a fake oracle cannot be flaky: %v", flaky)
		}
		for _, fd := range findings {
			if v, cause := oracle(fd.Shrunk.Schedule); cause != fd.Cause || v == verdict.OK {
				t.Errorf("%s: the shrunk schedule does not fail so", fd.Cause)
			}
		}
		return b.String()
	}
	one := output(1)
	if !strings.Contains(one, "1-minimal") || strings.Count(one, "\n  shrunk:") < 4 {
		t.Fatalf("too few causes shrunk to compare:\n%s", one)
	}
	for _, procs := range []int{8, 2, 8} {
		if got := output(procs); got != one {
			t.Fatalf("-j %d printed another output than -j 1:\n%s", procs, lineDiff(one, got))
		}
	}
}

// lineDiff is the first line where a and b differ, with its neighbours.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		if i >= len(al) || i >= len(bl) || al[i] != bl[i] {
			get := func(l []string) string {
				if i < len(l) {
					return l[i]
				}
				return "(end)"
			}
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, get(al), get(bl))
		}
	}
	return "(same)"
}

// clone reads a schedule's JSON back as plain JSON: for every schedule
// the generator draws, that is what schedule.Decode (strict, for input
// from elsewhere) reads, and a deep copy: changing the clone's threads
// leaves the schedule as it was.
func TestCloneIsDecode(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		s := Draw(seed, schedule.Filter{})
		want, err := schedule.Decode(string(s.JSON()))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		c := clone(s)
		if !reflect.DeepEqual(c, want) {
			t.Fatalf("seed %d: clone %s, Decode %s", seed, c.JSON(), want.JSON())
		}
		if c.Sink != nil && len(c.Sink.Threads) > 0 {
			c.Sink.Threads[0].Calls = append(c.Sink.Threads[0].Calls, schedule.Call{Lines: 999})
			if string(s.JSON()) != string(want.JSON()) {
				t.Fatalf("seed %d: changing the clone changed the schedule", seed)
			}
		}
	}
}
