package policy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"logjam/harness/ledger"
	"logjam/pipes"
	"logjam/scenario"
	"logjam/sim"
	"logjam/sim/policy"
	"logjam/telemetry"
	"logjam/verdict"
)

// keptLines is more than a page of 80-byte lines: a catch-up into one
// page of room stops part-way.
const keptLines = 60

// catchUpPartWayChild (spec "policy"): one binding call logs keptLines
// lines while fd 2 (a full one-page pipe) has no room, so they are kept;
// once the parent has read one page ("go" on stdin), it logs one more: room
// again, the catch-up starts and fd 2 fills before it ends. The parent
// drains fd 2 only after "caught-up-part-way".
func catchUpPartWayChild(name string) int {
	rt := childRuntime(name, sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}})
	if rt == nil {
		return 2
	}
	main := rt.Main
	be := rt.NewBackend("xnnpack")
	in := bufio.NewReader(os.Stdin)
	rt.Call(main, "execute", func() *sim.NativeError {
		if err := be.ExecuteLogging(main, sim.Info, keptLines, 80); err != nil {
			return err
		}
		fmt.Fprintln(os.Stdout, "kept")
		if _, err := in.ReadString('\n'); err != nil { // the parent freed one page
			return nil
		}
		err := be.ExecuteLogging(main, sim.Info, 1, 80)
		fmt.Fprintln(os.Stdout, "caught-up-part-way")
		return err
	})
	rt.In.DumpStreams()
	fmt.Fprintln(os.Stdout, "done")
	return 0
}

// docs/SCENARIOS.md, logjam: after a stall, a catch-up writes the kept lines as
// fd 2 takes them; one that stops part-way (fd 2 full again) keeps the rest,
// the line it could not write included, in order, and writes them later:
// nothing lost, nothing reordered.
func TestACatchUpThatStopsPartWayKeepsTheRestInOrder(t *testing.T) {
	p, err := pipes.New(4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	filler := fillPipe(t, p.W)
	tel, err := os.CreateTemp(t.TempDir(), "telemetry")
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound on a stuck child, not a timing claim
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=catch-up-part-way logjam", telemetry.FDEnv+"=3")
	cmd.Stderr, cmd.ExtraFiles = p.W, []*os.File{tel}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.W.Close()
	sc := bufio.NewScanner(stdout)
	wait := func(what string) {
		for sc.Scan() {
			if sc.Text() == what {
				return
			}
		}
		t.Fatalf("the child never said %q", what)
	}

	wait("kept")
	page := make([]byte, 4096) // one page of the filler: room for part of what is kept
	if _, err := io.ReadFull(p.R, page); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, "go")
	wait("caught-up-part-way")
	// The catch-up stopped part-way: fd 2 is full again (no reader since).
	if n, err := unix.IoctlGetInt(int(p.R.Fd()), unix.TIOCINQ); err != nil || n < 4096-80 {
		t.Fatalf("fd 2 holds %d bytes after the catch-up (%v): it did not fill, so it did not stop part-way", n, err)
	}
	rest, _ := io.ReadAll(p.R)
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	fd2 := append(page, rest...)[filler:]
	var events []telemetry.Event
	b, _ := os.ReadFile(tel.Name())
	telemetry.Read(bytes.NewReader(b), func(ev telemetry.Event) { events = append(events, ev) })
	tr := telemetry.Decode(events)
	if len(tr.Lines) != keptLines+1 {
		t.Fatalf("the call logged %d lines, want %d", len(tr.Lines), keptLines+1)
	}
	if j := ledger.Judge(scenario.Contract{}, tr, fd2); j.Verdict != verdict.OK {
		t.Fatalf("%s, want OK (every line, in order): %s", j.Verdict, j.Evidence.Detail)
	}
}

// roomWaitChild (spec "policy"): a binding call's first line meets fd 2 (a
// full pipe) with no room; it says how long the log call took before the
// line was kept.
func roomWaitChild(name string) int {
	rt := childRuntime(name, sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}})
	if rt == nil {
		return 2
	}
	main := rt.Main
	be := rt.NewBackend("xnnpack")
	rt.Call(main, "execute", func() *sim.NativeError {
		start := time.Now()
		err := be.ExecuteLogging(main, sim.Info, 1, 80)
		fmt.Fprintf(os.Stdout, "waited %d\n", time.Since(start))
		return err
	})
	rt.In.DumpStreams()
	fmt.Fprintln(os.Stdout, "done")
	return 0
}

// docs/SCENARIOS.md, logjam: a line in a call goes to fd 2 if fd 2 takes it
// within the room check's bound (RoomWait, 100 ms: docs/SINK.md), and is
// kept only after that bound: a busy reader that drains within it loses
// nothing to the keep. With no reader at all the call must have waited the
// bound before keeping the line, not less (a zero wait would keep the line
// at once), and not grossly more (a loaded machine waits a little longer;
// a second is ten bounds). The bound is the documented 100 ms, not
// RoomWait itself: a RoomWait of 0 must fail here. The header's own test
// has the same shape (calibrate/headertest, RoomCheck.*).
func TestALineWaitsTheRoomChecksBoundBeforeItIsKept(t *testing.T) {
	const bound = 100 * time.Millisecond
	cmd, p, _, _, stdout := startOnFullPipe(t, "room-wait logjam")
	sc := bufio.NewScanner(stdout)
	var waited time.Duration
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "waited %d", &waited); err == nil {
			break
		}
	}
	go io.Copy(io.Discard, p.R)
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if waited < bound {
		t.Fatalf("the line was kept after %s, before the room check's bound %s (RoomWait is %s)", waited, bound, policy.RoomWait)
	}
	if waited >= time.Second {
		t.Fatalf("the line was kept after %s, far past the room check's bound %s", waited, bound)
	}
}
