package search

import (
	"context"
	"strings"
	"testing"

	"logjam/scenario/schedule"
	"logjam/verdict"
)

func TestClassNamesTheKnownFailures(t *testing.T) {
	s := schedule.Schedule{Family: schedule.FamilySink, Policy: "pystderr", Platform: "linux",
		Sink: &schedule.Sink{FD2: schedule.FD2{Kind: schedule.FD2Pipe, StallMs: 200}, Abort: &schedule.Abort{After: 1}}}
	if c := Class(s, verdict.Hang, "deadlock: thread A holds the GIL and xnnpack workspace lock ..."); c != "pystderr HANG (gil+backend-lock)" {
		t.Errorf("got %q", c)
	}
	if c := Class(s, verdict.Lost, ""); c != "pystderr LOST (stall+abort)" {
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
		s := Draw(seed, schedule.Filter{Family: schedule.FamilySink})
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

// A failure whose replays did not all show it again is FLAKY, with its
// replay count, and fails the search.
func TestFlakyNamesItsReplayCount(t *testing.T) {
	f := Flaky{Seed: 7, Failure: "fd2 HANG (pipe)", Got: []string{"fd2 HANG (pipe)", "fd2 BADESC"}}
	if f.Agreed() != 1 || !strings.Contains(f.String(), "FLAKY: seed 7 fd2 HANG (pipe): 1 of 2 replays agreed (gave fd2 HANG (pipe); fd2 BADESC)") {
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
	s := schedule.Schedule{Family: schedule.FamilySink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &schedule.Sink{FD2: schedule.FD2{Kind: schedule.FD2Pipe, Capacity: 4096, Stalls: []schedule.Stall{
			{At: schedule.StallAtLine, Thread: 2, Call: 1, Line: 3, Ms: 200}, {At: schedule.StallAtExit, Ms: 200}}},
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
