package policy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"logjam/harness/ledger"
	"logjam/pipes"
	"logjam/scenario"
	"logjam/sim"
	"logjam/sim/keep"
	"logjam/telemetry"
	"logjam/verdict"
)

// helperEnv makes the re-executed test binary play one of the children
// below: runs of one policy against a real fd-2 pipe, judged by the ledger.
const helperEnv = "LOGJAM_POLICY_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		scen, rest, _ := strings.Cut(spec, " ")
		switch scen {
		case "daemon-no-room":
			os.Exit(daemonNoRoomChild(rest))
		case "two-ctrl-c":
			os.Exit(twoCtrlCChild(rest))
		case "catch-up-part-way":
			os.Exit(catchUpPartWayChild(rest))
		case "room-wait":
			os.Exit(roomWaitChild(rest))
		case "room-ask":
			os.Exit(roomAskChild(rest))
		case "held-room":
			os.Exit(heldRoomChild(rest))
		case "abort-in-flight":
			os.Exit(abortInFlightChild(rest))
		case "in-flight":
			os.Exit(inFlightChild(rest))
		case "unheld-pace":
			os.Exit(unheldPaceChild(rest))
		case "hold-end":
			os.Exit(holdEndChild(rest))
		}
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// daemonNoRoomChild (spec "policy python") runs one daemon thread whose
// binding call logs 3 lines while fd 2 (a full pipe) has no room; the call
// returns, then the interpreter exits. The parent reads fd 2 only after
// "daemon-done" on stdout.
func daemonNoRoomChild(spec string) int {
	name, py, _ := strings.Cut(spec, " ")
	var v sim.Version
	if _, err := fmt.Sscanf(py, "%d.%d.%d", &v.Major, &v.Minor, &v.Micro); err != nil {
		fmt.Fprintln(os.Stdout, "bad python:", err)
		return 2
	}
	rt := childRuntime(name, sim.Options{Platform: sim.Linux, Python: v})
	if rt == nil {
		return 2
	}
	in, main := rt.In, rt.Main
	be := rt.NewBackend("xnnpack")
	called := make(chan struct{})
	in.Start("daemon-1", true, func(t *sim.Thread) *sim.PyErr {
		defer close(called)
		return rt.Call(t, "execute", func() *sim.NativeError { return be.ExecuteLogging(t, sim.Info, 3, 80) })
	})
	main.ReleaseGIL()
	<-called
	main.AcquireGIL()
	fmt.Fprintln(os.Stdout, "daemon-done")
	if err := in.Shutdown(main); err != nil {
		fmt.Fprintln(os.Stdout, err)
		return 1
	}
	fmt.Fprintln(os.Stdout, "done")
	return 0
}

// runDaemonNoRoom runs the child with fd 2 a one-page pipe filled to the
// brim, and judges it as a cell is judged: the ledger on its telemetry and
// the fd-2 bytes written after the filler.
func runDaemonNoRoom(t *testing.T, policyName, python string) (ledger.Judgement, []byte) {
	t.Helper()
	cmd, p, filler, tel, stdout := startOnFullPipe(t, "daemon-no-room "+policyName+" "+python)
	var said []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "daemon-done" {
		said = append(said, sc.Text())
	}
	// Only now is fd 2 read: every write before this point met a full pipe.
	fd2, _ := io.ReadAll(p.R)
	for sc.Scan() {
		said = append(said, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v; stdout %q", err, said)
	}
	if len(fd2) < filler || !bytes.Equal(fd2[:filler], bytes.Repeat([]byte{'.'}, filler)) {
		t.Fatalf("fd 2 lost its filler: %d bytes", len(fd2))
	}
	fd2 = fd2[filler:]
	var events []telemetry.Event
	if _, err := tel.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	telemetry.Read(tel, func(ev telemetry.Event) { events = append(events, ev) })
	tr := telemetry.Decode(events)
	if len(tr.Lines) != 3 {
		t.Fatalf("the daemon logged %d lines, want 3", len(tr.Lines))
	}
	return ledger.Judge(scenario.Contract{}, tr, fd2), fd2
}

// fillPipe writes dots into the pipe until it is full and returns how many.
func fillPipe(t *testing.T, w *os.File) int {
	fd := int(w.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	defer syscall.SetNonblock(fd, false) // the child's fd 2 blocks, as a real one does
	n := 0
	chunk := bytes.Repeat([]byte{'.'}, 512)
	for {
		k, err := syscall.Write(fd, chunk)
		if k > 0 {
			n += k
		}
		if err == syscall.EAGAIN {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// docs/SCENARIOS.md, logjam: "a daemon's lines that cannot be written are
// counted in a left-out note, not dropped silently". The merged fix (its
// daemon rule on Linux before 3.13.8) drops them silently: the negative
// control, LOST.
func TestADaemonsUnwrittenLinesAreCountedInTheNote(t *testing.T) {
	for _, c := range []struct {
		policy, python string
		want           verdict.Verdict
	}{
		{"logjam", "3.14.0", verdict.OK},
		{"logjam", "3.13.7", verdict.OK},
		{"merged", "3.13.7", verdict.Lost},
	} {
		t.Run(c.policy+"@"+c.python, func(t *testing.T) {
			j, fd2 := runDaemonNoRoom(t, c.policy, c.python)
			if j.Verdict != c.want {
				t.Fatalf("%s, want %s: %s; notes %q; fd 2 %q", j.Verdict, c.want, j.Evidence.Detail, j.Evidence.Notes, fd2)
			}
			if c.want != verdict.OK {
				return
			}
			var found bool
			for _, l := range strings.SplitAfter(string(fd2), "\n") {
				if n, _, ok := keep.ParseNote([]byte(l)); ok && n == 3 {
					found = true
				}
			}
			if !found {
				t.Errorf("no note for the 3 lines on fd 2: %q", fd2)
			}
		})
	}
}

// twoCtrlCChild (spec "policy"): a binding call on the main thread logs 3
// lines and a real Ctrl-C arrives in it; at the outermost exit the flush
// blocks on fd 2 (a full pipe), where the parent sends a second Ctrl-C.
func twoCtrlCChild(name string) int {
	rt := childRuntime(name, sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}})
	if rt == nil {
		return 2
	}
	main, sig := rt.Main, rt.In.Signals
	// signal.signal(SIGINT, signal.default_int_handler): the test may run
	// with SIGINT ignored (a background job), which the child inherits.
	sig.Install(sim.HandlerDefault)
	be := rt.NewBackend("xnnpack")
	rt.Call(main, "execute", func() *sim.NativeError {
		if err := be.ExecuteLogging(main, sim.Info, 3, 80); err != nil {
			return err
		}
		n := sig.Trips()
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		sig.WaitTrips(main, n+1) // the first Ctrl-C has reached the interpreter
		return nil
	})
	fmt.Fprintln(os.Stdout, "call-returned")
	rt.In.DumpStreams()
	fmt.Fprintln(os.Stdout, "done")
	return 0
}

// docs/SCENARIOS.md, buffered: at the outermost exit PyErr_CheckSignals runs
// first, saving a KeyboardInterrupt; if the flush then raises one and one
// was saved, every kept line is written to fd 2. With a Ctrl-C in the call
// and a second one while the flush blocks, the lines survive (the second
// KeyboardInterrupt is what is lost: LOSTINT). Without the check, the
// flush's KeyboardInterrupt would count its lines as written: LOST.
func TestBufferedSavesTheCallsCtrlCBeforeItsFlush(t *testing.T) {
	cmd, p, filler, tel, stdout := startOnFullPipe(t, "two-ctrl-c buffered")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound on waiting for the child, not a timing claim
	defer cancel()
	said := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			said <- sc.Text()
		}
		close(said)
	}()
	events := func() []telemetry.Event {
		var evs []telemetry.Event
		b, _ := os.ReadFile(tel.Name())
		telemetry.Read(bytes.NewReader(b), func(ev telemetry.Event) { evs = append(evs, ev) })
		return evs
	}
	count := func(kind string) int {
		n := 0
		for _, ev := range events() {
			if ev.Ev == kind {
				n++
			}
		}
		return n
	}
	// The flush blocks on the full pipe: the second Ctrl-C, there.
	returned := false
	waitFor := func(what string, cond func() bool) {
		for !cond() && !returned {
			select {
			case l, ok := <-said:
				returned = returned || l == "call-returned" || !ok
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			case <-time.After(5 * time.Millisecond): // polls the telemetry file
			}
		}
	}
	waitFor("the flush to block", func() bool { return count(telemetry.KindBlockedWrite) > 0 })
	if !returned {
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	}
	// Read fd 2 only once the second Ctrl-C has been handled (or the call
	// returned without waiting for room).
	waitFor("the second handler run", func() bool { return count(telemetry.KindHandler) >= 2 })
	fd2, _ := io.ReadAll(p.R)
	for range said {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	fd2 = fd2[filler:]
	tr := telemetry.Decode(events())
	j := ledger.Judge(scenario.Contract{Interrupts: 2}, tr, fd2)
	if j.Verdict != verdict.LostInt {
		t.Fatalf("%s, want LOSTINT (the lines kept, the second KeyboardInterrupt swallowed): %s; fd 2 %q", j.Verdict, j.Evidence.Detail, fd2)
	}
}

// startOnFullPipe starts this test binary as the helper named by arg, its
// fd 2 a one-page pipe already full (filler bytes) and its telemetry on
// fd 3; the parent's write end is closed, so the child's is the only writer.
func startOnFullPipe(t *testing.T, arg string) (cmd *exec.Cmd, p *pipes.Pipe, filler int, tel *os.File, stdout io.ReadCloser) {
	t.Helper()
	p, err := pipes.New(4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	filler = fillPipe(t, p.W)
	tel, err = os.CreateTemp(t.TempDir(), "telemetry")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound on a stuck child, not a timing claim
	t.Cleanup(cancel)
	cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+arg, telemetry.FDEnv+"=3")
	cmd.Stderr, cmd.ExtraFiles = p.W, []*os.File{tel}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.W.Close()
	return cmd, p, filler, tel, stdout
}
