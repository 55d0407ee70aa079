package search

import (
	"fmt"
	"strings"
	"testing"

	"logjam/scenario/schedule"
	"logjam/verdict"
)

// describeSample is a found failure and its shrunk form, by hand.
func describeSample() (found, shrunk schedule.Schedule) {
	found = schedule.Schedule{Kind: schedule.KindSink, Policy: "buffered", Platform: "macos", Python: "3.13.8", Buffering: "unbuffered",
		Sink: &schedule.Sink{
			FD2:     schedule.FD2{Kind: schedule.FD2Pipe, Capacity: 4096, Stalling: schedule.Stalling{StallMs: 200}},
			Stderr:  schedule.Stderr{Kind: schedule.StderrOSError, K: 5},
			Threads: []schedule.Thread{{Calls: []schedule.Call{{Backend: 1, Lines: 57, Size: 78, Level: "E", Invalid: 3}, {Backend: 0, Lines: 3, Size: 81, Level: "I", Nested: &schedule.Call{Lines: 2, Size: 80, Level: "I"}}}}, {Calls: nil, Outside: 8}},
			Abort:   &schedule.Abort{Fatal: true, After: 4},
		}}
	found.Sink.Daemons = 2
	shrunk = schedule.Schedule{Kind: schedule.KindSink, Policy: "buffered", Platform: "linux", Python: "3.12",
		Sink: &schedule.Sink{FD2: schedule.FD2{Kind: schedule.FD2File}, Stderr: schedule.Stderr{Kind: schedule.StderrOSError, K: 5},
			Threads: []schedule.Thread{{Calls: []schedule.Call{{Backend: 1, Lines: 0, Size: 258, Level: "I"}}, Outside: 1}}}}
	return found, shrunk
}

// A schedule is described in words: the runtime, then each axis's words in
// the order of schedule.Axes (the abort, the threads and their calls, the
// daemons, the lines outside a call, sys.stderr, fd 2), without its base64
// or JSON.
func TestDescribeSaysWhatTheScheduleDoes(t *testing.T) {
	found, shrunk := describeSample()
	got := Describe(found)
	want := "macos, Python 3.13.8 unbuffered; main's last call logs 4 more, then a Fatal line (abort); " +
		"2 threads, 3 calls, 62 lines (calls: 1 invalid UTF-8, 1 nested); 2 daemon threads; 8 lines outside a call; " +
		"sys.stderr raising OSError from its write 5 on; fd 2 a 4096-byte pipe, stalled 200 ms"
	if got != want {
		t.Errorf("Describe(found):\n got %q\nwant %q", got, want)
	}
	if got, want := Describe(shrunk), "linux, Python 3.12; 1 thread, 1 call, 0 lines; 1 line outside a call; sys.stderr raising OSError from its write 5 on; fd 2 a file"; got != want {
		t.Errorf("Describe(shrunk):\n got %q\nwant %q", got, want)
	}
	lazy := schedule.Schedule{Kind: schedule.KindLazyInit, Variant: "old", Platform: "linux", Python: "3.12", Lazy: &schedule.Lazy{Backend: "xpu", Race: true, Ops: []string{"call-seed", "init"}}}
	if got, want := Describe(lazy), "linux, Python 3.12; backend xpu; the run_now race first; then call-seed, init"; got != want {
		t.Errorf("Describe(lazy):\n got %q\nwant %q", got, want)
	}
}

// The table of causes is compact: each cause's found and shrunk schedule
// in words, a labelled rerun line, and no base64 (that is -v's, with each
// replay labelled found or shrunk); one line says which causes are
// findings and which the ground truth, and a finding's cause says so.
func TestFailuresAreSummedUpInWordsAndTheBase64IsVerbose(t *testing.T) {
	found, shrunk := describeSample()
	mine := found
	mine.Policy = "logjam"
	res := []Result{
		{Index: 0, Seed: 7, Schedule: found, Verdict: verdict.Misrouted, Class: "buffered MISROUTED", Cause: "buffered MISROUTED: to fd 2 outside a call"},
		{Index: 1, Seed: 8, Schedule: mine, Verdict: verdict.Lost, Class: "logjam LOST", Cause: "logjam LOST: lost main's"},
	}
	fds := []*Finding{
		{Cause: res[0].Cause, First: res[0], Runs: 1, Classes: []string{res[0].Class}, Replayed: res[0].Cause, Shrunk: Shrunk{Schedule: shrunk, Runs: 16, Weight: 16, Minimal: true, Steps: []string{"thread 1"}}},
		{Cause: res[1].Cause, First: res[1], Runs: 1, Classes: []string{res[1].Class}, Replayed: res[1].Cause, Shrunk: Shrunk{Schedule: shrunk, Runs: 3, Weight: 3, Minimal: true}},
	}
	print := func(verbose bool) string {
		var b strings.Builder
		if fl := PrintFailures(&b, res, fds, schedule.Filter{}, 40, verbose); len(fl) > 0 {
			t.Fatalf("flaky: %v", fl)
		}
		return b.String()
	}
	short := print(false)
	for _, want := range []string{
		"\n2 causes: 1 finding (logjam or fixed failing: a bug), 1 ground truth (an older policy failing as documented)\n",
		"\nlogjam LOST: lost main's  [a finding: a bug]\n",
		"\nbuffered MISROUTED: to fd 2 outside a call\n",
		fmt.Sprintf("\n  found:    %s (%d faults, %d lines)\n", Describe(found), found.Faults(), found.Lines()),
		fmt.Sprintf("\n  shrunk:   %s (faults %d -> %d, lines %d -> %d; 16 child runs, 1-minimal)\n  rerun:    ./logjam chaos -random 1 -seed 7\n",
			Describe(shrunk), found.Faults(), shrunk.Faults(), found.Lines(), shrunk.Lines()),
	} {
		if !strings.Contains(short, want) {
			t.Errorf("no %q in:\n%s", want, short)
		}
	}
	for _, not := range []string{"-replay ", found.Encode(), "schedule:", "entry:", "simrt:", "steps:"} {
		if strings.Contains(short, not) {
			t.Errorf("without -v, %q is printed:\n%s", not, short)
		}
	}
	long := print(true)
	for _, want := range []string{"  replay found:  " + ReplayCommand(found) + "\n", "  replay shrunk: " + ReplayCommand(shrunk) + "\n", "  steps:    thread 1\n", "  simrt:    "} {
		if !strings.Contains(long, want) {
			t.Errorf("-v: no %q in:\n%s", want, long)
		}
	}
	if strings.Contains(long, "\n  replay: ") {
		t.Errorf("-v: an unlabelled replay line:\n%s", long)
	}
}
