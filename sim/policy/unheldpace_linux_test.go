package policy_test

import (
	"bytes"
	"fmt"
	"testing"

	"logjam/scenario"
	"logjam/telemetry"
)

// unheldPaceChild (spec "unheld-pace"): with the parent's reader stalled
// from the start,
// the main thread writes 3,000 bytes to fd 2 (a one-page pipe the parent
// drains), resumes the reader and at once writes 3,000 more: together more
// than the pipe holds, unless the reader read the first ones before.
func unheldPaceChild(name string) int {
	rt := ackedRuntime(name)
	if rt == nil {
		return 2
	}
	main := rt.Main
	line := func(tag string) []byte { return bytes.Repeat([]byte(fmt.Sprintf("%-99s\n", tag)), 30) }
	rt.FD2.WriteDirect(main, line("before the resume"))
	rt.Tel.Emit(telemetry.Mark{Name: telemetry.MarkFD2Resume})
	rt.FD2.WriteDirect(main, line("after the resume"))
	return 0
}

// docs/TRUST.md, "A write the reader kept up with": a write(2) to a pipe
// the parent drains, its reader not held, first has the reader read what
// the pipe holds, so it blocks (and holds the reader) only when its own
// bytes exceed the pipe, never because the reader had not caught up yet.
// Before, the second write found the first one's bytes still there or
// not as the reader got a CPU, and blocked or not (random search:
// adaptive, BADESC or OK).
func TestAWriteFindsWhatTheReaderLeftReadWhateverItsPace(t *testing.T) {
	var blocked []string
	out, err := parentSide(t, "unheld-pace fd2", scenario.FD2ParentPipe, true, func(ev telemetry.Event) {
		if b, ok := telemetry.As[telemetry.BlockedWrite](ev); ok {
			blocked = append(blocked, fmt.Sprintf("%s pending %d", b.Thread, b.Pending))
		}
	})
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if len(blocked) > 0 {
		t.Errorf("a write blocked behind bytes the reader, resumed, had not read yet: %v", blocked)
	}
	for _, tag := range []string{"before the resume", "after the resume"} {
		if n := bytes.Count(out, []byte(tag)); n != 30 {
			t.Errorf("fd 2 holds %d of the 30 lines %q", n, tag)
		}
	}
}
