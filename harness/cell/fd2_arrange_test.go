package cell

import (
	"bytes"
	"testing"
	"time"

	"logjam/pipes"
	"logjam/scenario"
	"logjam/telemetry"
)

func markEvent(t *testing.T, name string) telemetry.Event {
	t.Helper()
	b, err := telemetry.Encode(telemetry.Mark{Name: name}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := telemetry.Parse(b)
	return ev
}

// The parent's answer to a room check's MarkFD2Read (docs/TRUST.md, "What
// is still time"): a reader that reads on has read everything the pipe
// held when it acks, though it was resumed only just before the ask (its
// goroutine has yet to run); a stalled one acks at once and reads nothing.
func TestAReadAskIsAnsweredByTheReadersState(t *testing.T) {
	for _, stalled := range []bool{false, true} {
		a, err := ArrangeFD2(scenario.FD2ParentPipe, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		line := bytes.Repeat([]byte{'x'}, 4000)
		if _, err := a.Child().Write(line); err != nil {
			t.Fatal(err)
		}
		acked := make(chan int, 1)
		a.AckReads(func() {
			n, err := pipes.QueuedFile(a.parent)
			if err != nil {
				t.Error(err)
			}
			acked <- n
		})
		if !stalled {
			a.OnEvent(markEvent(t, telemetry.MarkFD2Resume))
		}
		a.OnEvent(markEvent(t, telemetry.MarkFD2Read))
		select {
		case n := <-acked:
			if !stalled && n != 0 {
				t.Errorf("reading on: acked with %d bytes unread, want 0", n)
			}
			if stalled && n != len(line) {
				t.Errorf("stalled: acked with %d bytes unread, want %d (a stalled reader reads nothing)", n, len(line))
			}
		case <-time.After(30 * time.Second): // a bound on a stuck answer, not a timing claim
			t.Fatalf("stalled=%v: no answer", stalled)
		}
		got, err := a.Collect()
		if err != nil || !bytes.Equal(got, line) {
			t.Fatalf("stalled=%v: collected %d bytes (%v), want the %d written", stalled, len(got), err, len(line))
		}
	}
}

// A pause of 0 ms resumes the reader before OnEvent returns: a MarkFD2Read
// asked after it must find the reader reading, not a timer's goroutine yet
// to run.
func TestAPauseOfZeroResumesAtOnce(t *testing.T) {
	a, err := ArrangeFD2(scenario.FD2ParentPipe, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abandon()
	b, _ := telemetry.Encode(telemetry.Mark{Name: telemetry.MarkFD2Pause, Ms: 0}, 0)
	ev, _ := telemetry.Parse(b)
	a.OnEvent(ev)
	if a.reader.Stalled() {
		t.Fatal("the reader is still stalled after a pause of 0 ms")
	}
}
