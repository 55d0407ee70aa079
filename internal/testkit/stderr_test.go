package testkit

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// What f writes on os.Stderr is returned, and os.Stderr is the original
// again after.
func TestCaptureStderrReturnsWhatFWrote(t *testing.T) {
	orig := os.Stderr
	got := CaptureStderr(t, func() { fmt.Fprint(os.Stderr, "logjam: one line\n") })
	if got != "logjam: one line\n" {
		t.Errorf("captured %q", got)
	}
	if os.Stderr != orig {
		t.Error("os.Stderr was not restored")
	}
	if got := CaptureStderr(t, func() {}); got != "" {
		t.Errorf("nothing written, %q captured", got)
	}
}

// A write of a MiB (sixteen pipes' worth) does not block f: the pipe is
// read while f runs.
func TestCaptureStderrTakesMoreThanAPipeHolds(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	done := make(chan string, 1)
	go func() { done <- CaptureStderr(t, func() { fmt.Fprint(os.Stderr, big) }) }()
	select {
	case got := <-done:
		if got != big {
			t.Errorf("captured %d bytes, want %d", len(got), len(big))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a 1 MiB write to the captured stderr blocked")
	}
}

// A panic in f leaves os.Stderr restored.
func TestCaptureStderrRestoresStderrWhenFPanics(t *testing.T) {
	orig := os.Stderr
	func() {
		defer func() { _ = recover() }()
		CaptureStderr(t, func() { panic("boom") })
	}()
	if os.Stderr != orig {
		os.Stderr = orig
		t.Fatal("a panic in f left os.Stderr the pipe")
	}
}
