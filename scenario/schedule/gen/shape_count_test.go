package gen

import (
	"os"
	"testing"

	. "logjam/scenario/schedule"
)

// Two shapes random search needs and had drawn seldom (docs/RANDOM.md, "A
// bug zoo"), counted over the zoo's seed streams of -policy logjam: a
// generator-only count, no child runs. LOGJAM_SHAPES=1 go test -run
// TestShapeCounts -v ./scenario/schedule/gen/

// repeatedStallShape: a stall of a pipe that repeats in one call with
// sys.stderr the original and no Ctrl-C after a line, the lines between
// filling the pipe twice over (the catch-up after the first stall then
// meets the second part-way, at a line of the call).
func repeatedStallShape(s Schedule) bool {
	k := s.Sink
	if k == nil || k.FD2.Kind != FD2Pipe || k.Stderr.Kind != StderrOriginal || k.Sigint == SigintLine {
		return false
	}
	for i, a := range k.FD2.Stalls {
		for _, b := range k.FD2.Stalls[i+1:] {
			if a.At == StallAtLine && b.At == StallAtLine && a.Thread == b.Thread && a.Call == b.Call {
				c := k.Threads[a.Thread].Calls[a.Call]
				if b.Line < c.Lines && (b.Line-a.Line)*(c.Size+40) > 2*k.FD2.Capacity {
					return true
				}
			}
		}
	}
	return false
}

// processWideAtFatalShape: a Fatal abort with no stall at it on a stalled
// pipe, the main thread's call before the aborting one filling it, no
// switch point or nested call in it, another thread with no call and lines
// outside one (it runs while that call's exit flushes: its lines are kept
// process-wide), no Ctrl-C and no fd-2 refusal.
func processWideAtFatalShape(s Schedule) bool {
	k := s.Sink
	if k == nil || k.Abort == nil || !k.Abort.Fatal || len(k.Threads) < 2 || len(k.Threads[0].Calls) != 2 {
		return false
	}
	if k.FD2.Kind != FD2Pipe || k.FD2.StallMs == 0 && len(k.FD2.Stalls) == 0 {
		return false
	}
	if c := k.Threads[0].Calls[0]; c.Lines*(c.Size+40) <= k.FD2.Capacity {
		return false
	}
	for _, st := range k.FD2.Stalls {
		if st.At == StallAtAbort {
			return false
		}
	}
	if c := k.Threads[0].Calls[0]; c.WaitFor > 0 || c.Nested != nil || k.Sigint != "" || k.FD2.Errors != nil {
		return false
	}
	for _, th := range k.Threads[1:] {
		if th.Outside > 0 && len(th.Calls) == 0 {
			return true
		}
	}
	return false
}

func TestShapeCounts(t *testing.T) {
	if os.Getenv("LOGJAM_SHAPES") == "" {
		t.Skip("a count to read, not a check: LOGJAM_SHAPES=1")
	}
	f := Filter{Kind: KindSink, Policies: []string{"logjam"}}
	const n = 10000
	for k := 0; k < 3; k++ {
		var stall, fatal int
		for i := 0; i < n; i++ {
			s := Schedules(f).Example((k+1)*1_000_000 + i)
			if repeatedStallShape(s) {
				stall++
			}
			if processWideAtFatalShape(s) {
				fatal++
			}
		}
		t.Logf("seeds %d-%d: a repeated stall felt %d, process-wide lines at a Fatal %d", (k+1)*1_000_000, (k+1)*1_000_000+n-1, stall, fatal)
	}
}

// crashAtKeepShape: a crash handler at a line outside a call that logjam
// keeps, its lock held: sys.stderr replaced (the zoo's
// fatal-waits-for-its-own-keep-lock is felt only there).
func crashAtKeepShape(s Schedule) bool {
	k := s.Sink
	return k != nil && k.Crash != nil && k.Stderr.Kind != StderrOriginal
}

// TestCrashDrawMeetsTheKeepLock: the crash axis's draw (axis_crash.go)
// silences the calls often enough that a crash meets logjam's keep lock
// in at least one run of -policy logjam in 100.
func TestCrashDrawMeetsTheKeepLock(t *testing.T) {
	f := Filter{Kind: KindSink, Policies: []string{"logjam"}}
	const n = 2000
	got := 0
	for i := 0; i < n; i++ {
		if crashAtKeepShape(Schedules(f).Example(1_000_000 + i)) {
			got++
		}
	}
	t.Logf("%d of %d schedules crash at a kept line", got, n)
	if got < n/100 {
		t.Errorf("%d of %d schedules crash at a line logjam keeps (want at least %d)", got, n, n/100)
	}
}
