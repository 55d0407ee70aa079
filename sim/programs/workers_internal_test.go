package programs

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"logjam/sim"
	"logjam/sim/policy"
)

// A pool worker whose first line blocks on fd 2 a stalled reader (the
// parent's pipe or terminal) must not leave its caller waiting outside the
// wait-for graph: the stall's nemesis resumes the reader only once nothing
// but the reader can move, so a caller that waits for the worker's first
// line there waits for ever (random search: a pool on a stalled pty, a
// HANG on a loaded machine). The pipe here is full before the call; the
// caller must come to wait in the graph while the worker is blocked.
func TestAPoolWorkerBlockedOnAStalledReaderLetsTheNextStart(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096); err != nil {
		t.Fatal(err)
	}
	fd := int(w.Fd())
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	for { // full: the parent's reader is stalled with the pipe full
		if _, err := unix.Write(fd, bytes.Repeat([]byte{'.'}, 512)); err != nil {
			break
		}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(fd, 2); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Dup2(saved, 2); _ = unix.Close(saved) }()

	mk, err := policy.ByName("fd2") // writes each line to fd 2, blocking
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sim.New(sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}, Policy: mk, NoTelemetry: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{RT: rt, Main: rt.Main}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.call(e.Main, "execute", func() *sim.NativeError {
			runPool(e, e.Main, 2, 2, func(w int) string { return fmt.Sprintf("W%d", w) }, func(wt *sim.Thread, _, n int) {
				rt.LogBytes(wt, sim.Info, "threadpool.cpp", 88, bytes.Repeat([]byte{'w'}, 100))
			})
			return nil
		})
	}()
	settled := make(chan struct{})
	go func() { rt.G.WaitUntilOnlyTheParentMoves(false); close(settled) }()
	select {
	case <-settled:
	case <-time.After(10 * time.Second): // a bound for a hang, not a timing
		t.Error("with the worker blocked on the stalled pipe, the caller never came to wait in the wait-for graph")
	}
	go func() {
		_, _ = r.ReadFrom(bytes.NewReader(nil))
		buf := make([]byte, 4096)
		for {
			if _, err := r.Read(buf); err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end once the pipe was read")
	}
}
