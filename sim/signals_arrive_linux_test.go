package sim

import (
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"logjam/pipes"
)

// docs/TRUST.md, "A signal's two halves": the threads a SIGINT wakes run
// only once its wake-up of a blocked write(2) is in place, so a write the
// main thread begins after taking the KeyboardInterrupt is not ended by
// that same signal, however late the bridge's goroutine ran. The planted
// 50 ms in the wake-up is the window a loaded machine opens (random search:
// merged, the fallback's blocked write ended by EINTR or not, LOST or
// DOUBLEINT).
func TestAWriteBegunAfterASIGINTIsNotEndedByIt(t *testing.T) {
	r := fullPipeOnFD2(t)
	queued, err := pipes.Queued(int(r.Fd()))
	if err != nil {
		t.Skip("cannot count a pipe's bytes here:", err)
	}
	rt, err := New(Options{Platform: Linux, Python: Version{3, 12, 0}, NoTelemetry: true,
		Policy: func(*Runtime) (Policy, error) { return nopPolicy{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	sig := rt.In.Signals
	sig.Install(HandlerCounting) // listens also where SIGINT started ignored
	sig.mu.Lock()
	wake := sig.wake
	sig.wake = func() {
		time.Sleep(50 * time.Millisecond) // planted: the bridge slow between the flag and the wake-up
		wake()
	}
	sig.mu.Unlock()

	// The parent's read: once the main thread's write waits for room and
	// the SIGINT's wake-up has arrived, the pipe is read empty.
	var done atomic.Bool
	go func() {
		room := rt.FD2.room
		rt.G.WaitUntil(func() bool {
			return done.Load() || rt.Main.waiting == Resource(room) && room.wakes > 0
		})
		if !done.Load() {
			_, _ = io.CopyN(io.Discard, r, int64(queued))
		}
	}()
	defer func() {
		done.Store(true)
		rt.G.mu.Lock()
		rt.G.changedLocked()
		rt.G.mu.Unlock()
	}()

	seen := sig.Trips()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	sig.WaitTrips(rt.Main, seen+1)
	if exc := sig.Check(rt.Main); exc == nil || !exc.IsKeyboardInterrupt() {
		t.Fatalf("the SIGINT's check raised %v, want KeyboardInterrupt", exc)
	}
	line := []byte("E the fallback's line, written after the KeyboardInterrupt\n")
	if n := rt.FD2.WriteDirect(rt.Main, line); n != len(line) {
		t.Fatalf("the write begun after the SIGINT was handled wrote %d of %d bytes: the SIGINT's late wake-up ended its blocked write(2)", n, len(line))
	}
}
