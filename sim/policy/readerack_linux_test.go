package policy_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"logjam/pipes"
	"logjam/signals"
	"logjam/sim"
	"logjam/sim/policy"
	"logjam/telemetry"
)

// roomAskChild (spec "policy"): a binding call logs one line while fd 2, a
// full one-page pipe, has no room; its parent answers the child's marks
// (Options.ReaderAcks).
func roomAskChild(name string) int {
	rt := ackedRuntime(name)
	if rt == nil {
		return 2
	}
	main := rt.Main
	be := rt.NewBackend("xnnpack")
	rt.Call(main, "execute", func() *sim.NativeError { return be.ExecuteLogging(main, sim.Info, 1, 80) })
	rt.In.DumpStreams()
	return 0
}

// ackedRuntime is a child's runtime under policy name (Linux, Python 3.12)
// whose parent answers its marks (Options.ReaderAcks); nil, said on stdout,
// when it cannot be made.
func ackedRuntime(name string) *sim.Runtime {
	return childRuntime(name, sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}, ReaderAcks: true})
}

// childRuntime is the runtime a helper child plays on: opts with the
// policy called name. An error is printed on stdout, where the parent
// reads the child, and the runtime is nil (the child exits 2).
func childRuntime(name string, opts sim.Options) *sim.Runtime {
	mk, err := policy.ByName(name)
	if err == nil {
		opts.Policy = mk
		var rt *sim.Runtime
		if rt, err = sim.New(opts); err == nil {
			return rt
		}
	}
	fmt.Fprintln(os.Stdout, err)
	return nil
}

// docs/TRUST.md, "What is still time": a room check against a pipe the
// parent drains is decided by the reader's state, not by how soon the
// reader got a CPU. The parent here never reads on its own, as a reader a
// loaded machine keeps off the CPU for longer than the check's bound: asked
// (MarkFD2Read) while it reads on, it reads what the pipe holds, and the
// line goes to fd 2; asked while stalled, it answers at once without
// reading, and the line is kept. Without the ask, the reader that reads
// on lost the race and the line was kept as if fd 2 were stalled.
func TestARoomCheckAsksTheParentsReaderAndItsStateDecides(t *testing.T) {
	for _, pol := range []string{"merged", "logjam"} {
		for _, stalled := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stalled=%v", pol, stalled), func(t *testing.T) {
				route := roomAskRun(t, pol, stalled)
				want := "fd2"
				if stalled {
					want = "kept"
				}
				if route != want {
					t.Fatalf("the line's route is %q, want %q (the reader stalled: %v)", route, want, stalled)
				}
			})
		}
	}
}

// roomAskRun plays roomAskChild under policy pol with a parent that reads
// fd 2 only when asked (and not even then when stalled), and returns the
// first line's route.
func roomAskRun(t *testing.T, pol string, stalled bool) string {
	p, err := pipes.New(4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	fillPipe(t, p.W)
	telR, telW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=room-ask "+pol, telemetry.FDEnv+"=3")
	cmd.Stderr, cmd.ExtraFiles = p.W, []*os.File{telW}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.W.Close()
	telW.Close()
	stuck := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() }) // a bound on a stuck child, not a timing claim
	defer stuck.Stop()
	route, asked := "", 0
	drained := make(chan struct{})
	readQueued := func() {
		n, err := unix.IoctlGetInt(int(p.R.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Error(err)
		}
		if _, err := io.ReadFull(p.R, make([]byte, n)); err != nil {
			t.Error(err)
		}
	}
	ack := func() {
		if err := cmd.Process.Signal(signals.StallAck); err != nil {
			t.Error(err)
		}
	}
	telemetry.Read(telR, func(ev telemetry.Event) {
		m, _ := telemetry.As[telemetry.Mark](ev)
		switch m.Name {
		case telemetry.MarkFD2Read:
			asked++
			if !stalled {
				readQueued()
			}
			ack()
		case telemetry.MarkFD2Hold:
			ack() // this reader reads only when asked anyway
		case telemetry.MarkFD2ReadHeld:
			if route == "" {
				readQueued() // once the route is known, the drain below reads
			}
			ack()
		}
		if r, ok := telemetry.As[telemetry.Route](ev); ok && route == "" {
			route = r.Route
			go func() { _, _ = io.Copy(io.Discard, p.R); close(drained) }() // the call's end may flush
		}
	})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	<-drained
	if asked == 0 {
		t.Errorf("the child never asked the reader (%s)", telemetry.MarkFD2Read)
	}
	return route
}
