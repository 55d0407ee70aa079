package policy_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"logjam/scenario"
	"logjam/telemetry"
)

// holdEndFirst is three pages of 80-byte lines: a write that finds the
// one-page pipe full and holds the parent's reader; holdEndSecond is less
// than a page, written right after it.
const (
	holdEndFirst  = 3 * 4096 / 80
	holdEndSecond = 4096/80 - 3
)

// holdEndChild (spec "policy"): the main thread writes holdEndFirst lines
// to fd 2, a one-page pipe the parent drains, in one write, and at once
// holdEndSecond lines in another. The reader starts stalled and reads on
// once the first write waits for room, so that write meets a full pipe
// however fast the parent reads.
func holdEndChild(name string) int {
	rt := ackedRuntime(name)
	if rt == nil {
		return 2
	}
	go func() {
		rt.G.WaitUntilAnyWaits(rt.FD2.Room())
		rt.Tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Resume})
	}()
	first := bytes.Repeat([]byte(fmt.Sprintf("%-79s\n", "first write")), holdEndFirst)
	second := bytes.Repeat([]byte(fmt.Sprintf("%-79s\n", "second write")), holdEndSecond)
	rt.FD2.WriteDirect(rt.Main, first)
	rt.FD2.WriteDirect(rt.Main, second)
	return 0
}

// docs/TRUST.md, "The end of a hold": the last write call on a held pipe
// ends the hold and returns once the freed reader has read what the pipe
// holds, so a write right after it meets the pipe as the model left it
// (empty: the second write fits and never blocks), however slow the parent
// is to act on the release (a planted 100 ms). Before, parentReads ended
// the hold when it next looked, and the second write found the first one's
// last page still in the pipe, or gone, as the reader's pace went (random
// search: merged, OK or LOST).
func TestAWriteRightAfterAHoldMeetsTheDrainedPipe(t *testing.T) {
	blocked := 0
	out, err := parentSide(t, "hold-end merged", scenario.FD2ParentPipe, true, func(ev telemetry.Event) {
		if _, ok := telemetry.As[telemetry.BlockedWrite](ev); ok {
			blocked++
		}
		if m, ok := telemetry.As[telemetry.Mark](ev); ok && m.Name == telemetry.MarkFD2Release {
			time.Sleep(100 * time.Millisecond) // planted: the parent slow to free its reader
		}
	})
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if n, m := bytes.Count(out, []byte("first write")), bytes.Count(out, []byte("second write")); n != holdEndFirst || m != holdEndSecond {
		t.Fatalf("fd 2 holds %d of %d first lines and %d of %d second lines", n, holdEndFirst, m, holdEndSecond)
	}
	if blocked != 1 {
		t.Fatalf("%d writes blocked, want 1 (the first): the second write, right after the hold, met the first one's last page in the pipe", blocked)
	}
}
