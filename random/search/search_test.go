package search

import (
	"testing"

	"pgregory.net/rapid"

	"logjam/scenario/schedule"
	"logjam/verdict"
)

// Shrinking replays run seed inside rapid.Check: its first case must be
// the very schedule the search drew for that seed.
func TestRapidsFirstCaseIsTheSearchsSchedule(t *testing.T) {
	f := schedule.Filter{}
	for _, seed := range []uint64{1, 2, 17, 123456, 900001} {
		if err := setRapidFlags(seed); err != nil {
			t.Fatal(err)
		}
		var first string
		done := make(chan struct{})
		go func() {
			defer close(done)
			rapid.Check(&quietTB{}, func(rt *rapid.T) {
				s := schedule.Gen(f).Draw(rt, "schedule")
				if first == "" {
					first = string(s.JSON())
				}
			})
		}()
		<-done
		if want := string(Draw(seed, f).JSON()); first != want {
			t.Errorf("seed %d: rapid drew %s, the search %s", seed, first, want)
		}
	}
}

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
