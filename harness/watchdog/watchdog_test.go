package watchdog

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"logjam/internal/testkit"
	"logjam/telemetry"
	"logjam/verdict"
)

// slack is a generous allowance for a loaded CI machine (and -race) on top
// of the times the watchdog promises; the tests never assert tight times.
const slack = 5 * time.Second

func run(t *testing.T, cmd *exec.Cmd, cfg Config) (*Result, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := Run(context.Background(), cmd, cfg)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("result:\n%s", res.Summary())
		}
	})
	return res, elapsed
}

func wantVerdict(t *testing.T, res *Result, want verdict.Verdict) {
	t.Helper()
	if res.Verdict != want {
		t.Fatalf("verdict %s, want %s (%s)", res.Verdict, want, res.Reason)
	}
}

// assertGone checks that no process of the group and none of the given pids
// is left. Zombies count as gone: they are dead, only waiting to be reaped
// (the test process is a subreaper on Linux and reaps them here).
func assertGone(t *testing.T, pgid int, pids ...int) {
	t.Helper()
	limit := time.Now().Add(slack)
	for {
		for _, pid := range pids {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
		groupErr := syscall.Kill(-pgid, 0)
		var alive []int
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil && !testkit.IsZombie(pid) {
				alive = append(alive, pid)
			}
		}
		if errors.Is(groupErr, syscall.ESRCH) && len(alive) == 0 {
			return
		}
		if time.Now().After(limit) {
			t.Fatalf("left behind: kill(-%d, 0) = %v; live pids %v", pgid, groupErr, alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCompletedNeedsExitZeroAndMarker(t *testing.T) {
	res, _ := run(t, childCmd(t, "complete"), Config{Deadline: 30 * time.Second})
	wantVerdict(t, res, verdict.Completed)
	if !res.MarkerSeen || res.ExitCode != 0 || res.Killed || res.Signal != "" {
		t.Errorf("marker %v, exit %d, killed %v, signal %q", res.MarkerSeen, res.ExitCode, res.Killed, res.Signal)
	}
	if !bytes.Contains(res.Stdout, []byte("working\ndone\n")) {
		t.Errorf("stdout %q", res.Stdout)
	}
	if res.Stderr == nil || res.Pid <= 0 {
		t.Errorf("stderr %q (want captured, empty), pid %d", res.Stderr, res.Pid)
	}
	assertGone(t, res.Pid)
}

func TestExitZeroWithoutMarkerIsNoMarker(t *testing.T) {
	res, _ := run(t, childCmd(t, "nomarker"), Config{Deadline: 30 * time.Second})
	wantVerdict(t, res, verdict.NoMarker)
	if res.MarkerSeen || !strings.Contains(res.Reason, `"done"`) {
		t.Errorf("marker %v, reason %q", res.MarkerSeen, res.Reason)
	}
}

func TestCustomMarker(t *testing.T) {
	res, _ := run(t, childCmd(t, "nomarker"), Config{Deadline: 30 * time.Second, Marker: "almost done"})
	wantVerdict(t, res, verdict.Completed)
}

func TestNonZeroExitIsFailedWithItsOutput(t *testing.T) {
	res, _ := run(t, childCmd(t, "exit3"), Config{Deadline: 30 * time.Second})
	wantVerdict(t, res, verdict.Failed)
	if res.ExitCode != 3 || res.Reason != "exited with status 3" || res.Killed || res.Cycle != nil {
		t.Errorf("exit %d, reason %q, killed %v, cycle %v", res.ExitCode, res.Reason, res.Killed, res.Cycle)
	}
	if string(res.Stdout) != "partial output\n" || string(res.Stderr) != "boom: something failed\n" {
		t.Errorf("stdout %q, stderr %q", res.Stdout, res.Stderr)
	}
	summary := res.Summary()
	for _, want := range []string{"FAILED: exited with status 3", "| partial output", "| boom: something failed", "rerun: ", childEnv + "=exit3"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(summary, "HANG") {
		t.Errorf("a fast non-zero exit was called a hang:\n%s", summary)
	}
}

func TestKilledBySignalIsCrashWithItsName(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the child resets its SIGSEGV handler with rt_sigaction, a Linux system call")
	}
	res, _ := run(t, childCmd(t, "segv"), Config{Deadline: 30 * time.Second})
	wantVerdict(t, res, verdict.Crash)
	if res.Signal != "SIGSEGV" || res.SignalNumber != int(syscall.SIGSEGV) || res.ExitCode != -1 || res.Killed {
		t.Errorf("signal %q (%d), exit %d, killed %v", res.Signal, res.SignalNumber, res.ExitCode, res.Killed)
	}
	if !strings.Contains(res.Reason, "SIGSEGV") {
		t.Errorf("reason %q", res.Reason)
	}
}

func TestFastModeCycleIsHangBeforeTheDeadline(t *testing.T) {
	const deadline = 10 * time.Second
	res, elapsed := run(t, childCmd(t, "deadlock"), Config{Deadline: deadline, Mode: Fast})
	wantVerdict(t, res, verdict.Hang)
	if elapsed >= deadline {
		t.Errorf("returned after %s, not before the %s deadline", elapsed, deadline)
	}
	if res.Cycle == nil || !strings.Contains(res.Cycle.Text(), "waits for m2") {
		t.Fatalf("cycle %v", res.Cycle)
	}
	if !res.Killed || !strings.Contains(res.Reason, "fast mode") {
		t.Errorf("killed %v, reason %q", res.Killed, res.Reason)
	}
	var dump struct {
		Stacks string `json:"stacks"`
	}
	if res.Dump == nil || res.Dump.Decode(&dump) != nil || !strings.Contains(dump.Stacks, "goroutine") {
		t.Errorf("dump %v", res.Dump)
	}
	if !strings.Contains(res.Summary(), "cycle: main holds m1") {
		t.Errorf("summary lacks the cycle:\n%s", res.Summary())
	}
	assertGone(t, res.Pid)
}

// readyIsBlocked takes the stubborn child's first mark for a child that
// can only wait to be killed (Config.Blocked).
func readyIsBlocked(ev telemetry.Event) bool {
	m, ok := telemetry.As[telemetry.Mark](ev)
	return ok && m.Name == "ready"
}

func TestFastModeBlockedChildIsHangBeforeTheDeadline(t *testing.T) {
	const deadline = 10 * time.Second
	res, elapsed := run(t, childCmd(t, "stubborn"), Config{Deadline: deadline, Mode: Fast, GraceFloor: 200 * time.Millisecond, Blocked: readyIsBlocked})
	wantVerdict(t, res, verdict.Hang)
	if elapsed >= deadline/2 {
		t.Errorf("returned after %s, not well before the %s deadline", elapsed, deadline)
	}
	if !res.Killed || res.Cycle != nil || !strings.Contains(res.Reason, "every thread waits for what only the process could end (fast mode") {
		t.Errorf("killed %v, cycle %v, reason %q", res.Killed, res.Cycle, res.Reason)
	}
	assertGone(t, res.Pid)
}

func TestStrictModeWaitsForTheDeadlineOfABlockedChild(t *testing.T) {
	const deadline = time.Second
	cfg := Config{Deadline: deadline, Mode: Strict, GraceFloor: 200 * time.Millisecond, Blocked: readyIsBlocked}
	res, elapsed := run(t, childCmd(t, "stubborn"), cfg)
	wantVerdict(t, res, verdict.Hang)
	if elapsed < deadline || !strings.Contains(res.Reason, "did not finish within 1s") {
		t.Errorf("returned after %s (deadline %s), reason %q", elapsed, deadline, res.Reason)
	}
	assertGone(t, res.Pid)
}

func TestStrictModeWaitsForTheDeadlineAndKeepsTheCycle(t *testing.T) {
	const deadline = 1500 * time.Millisecond
	cfg := Config{Deadline: deadline, Mode: Strict, GraceFloor: time.Second}
	res, elapsed := run(t, childCmd(t, "deadlock"), cfg)
	wantVerdict(t, res, verdict.Hang)
	if elapsed < deadline {
		t.Errorf("returned after %s, before the %s deadline", elapsed, deadline)
	}
	if elapsed > deadline+cfg.Grace()+slack {
		t.Errorf("returned after %s, long after deadline %s + grace %s", elapsed, deadline, cfg.Grace())
	}
	if res.Cycle == nil || res.Dump == nil {
		t.Fatalf("cycle %v, dump %v", res.Cycle, res.Dump)
	}
	if !strings.Contains(res.Reason, "did not finish within 1.5s") || !strings.Contains(res.Reason, "dump received") {
		t.Errorf("reason %q", res.Reason)
	}
	assertGone(t, res.Pid)
}

func TestDeadlineWithoutDumpKillsAfterGrace(t *testing.T) {
	const deadline = time.Second
	cfg := Config{Deadline: deadline, Mode: Strict, GraceFloor: 500 * time.Millisecond}
	res, elapsed := run(t, childCmd(t, "stubborn"), cfg)
	wantVerdict(t, res, verdict.Hang)
	if res.Dump != nil || !res.Killed || res.Signal != "SIGKILL" {
		t.Errorf("dump %v, killed %v, signal %q", res.Dump, res.Killed, res.Signal)
	}
	if !strings.Contains(res.Reason, "no dump within") {
		t.Errorf("reason %q", res.Reason)
	}
	if elapsed < deadline || elapsed > deadline+cfg.Grace()+slack {
		t.Errorf("returned after %s; deadline %s, grace %s", elapsed, deadline, cfg.Grace())
	}
	assertGone(t, res.Pid)
}

func TestGrandchildHoldingStdout(t *testing.T) {
	t.Run("child hangs", func(t *testing.T) {
		const deadline = time.Second
		cfg := Config{Deadline: deadline, Mode: Strict, GraceFloor: time.Second}
		res, elapsed := run(t, childCmd(t, "grandchild-hang"), cfg)
		wantVerdict(t, res, verdict.Hang)
		if elapsed > deadline+cfg.Grace()+slack {
			t.Errorf("returned after %s; deadline %s, grace %s", elapsed, deadline, cfg.Grace())
		}
		assertGone(t, res.Pid, res.Pid, markPid(t, res.Events, "grandchild"))
	})
	t.Run("child exits", func(t *testing.T) {
		res, elapsed := run(t, childCmd(t, "grandchild-exit"), Config{Deadline: 30 * time.Second})
		wantVerdict(t, res, verdict.Completed)
		if elapsed > slack {
			t.Errorf("returned after %s although the child exited at once", elapsed)
		}
		assertGone(t, res.Pid, res.Pid, markPid(t, res.Events, "grandchild"))
	})
	t.Run("grandchild leaves the group", func(t *testing.T) {
		// The watchdog cannot kill what left its group, but it must not
		// wait for it either: it stops reading the pipes it holds.
		cfg := Config{Deadline: 30 * time.Second}
		res, elapsed := run(t, childCmd(t, "grandchild-escape"), cfg)
		escaped := markPid(t, res.Events, "grandchild")
		t.Cleanup(func() {
			_ = syscall.Kill(escaped, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(escaped, &ws, 0, nil)
		})
		wantVerdict(t, res, verdict.Completed)
		if elapsed > cfg.Grace()+slack {
			t.Errorf("returned after %s although the child exited at once (grace %s)", elapsed, cfg.Grace())
		}
		assertGone(t, res.Pid, res.Pid)
	})
}

// A reader that falls behind must still get every event the child wrote
// before it died: the last one is what decides a verdict (an abort's
// "abort" event, docs/TRUST.md). The reader here is held on the first event
// for longer than drain's deadline (at most a second), while the rest wait
// in the pipe and the child exits.
func TestEventsStillInThePipeAtTheDeadlineAreRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("drain asks the kernel what a pipe holds on Linux only")
	}
	held := false
	cfg := Config{Deadline: 30 * time.Second, OnEvent: func(telemetry.Event) {
		if !held {
			held = true
			time.Sleep(3 * time.Second)
		}
	}}
	res, _ := run(t, childCmd(t, "burst"), cfg)
	wantVerdict(t, res, verdict.Completed)
	if n := len(res.Events); n != burstEvents+2 {
		t.Fatalf("%d events, want %d (the child's last: %q)", n, burstEvents+2, lastMark(res.Events))
	}
	if got := lastMark(res.Events); got != "last" {
		t.Errorf("last event %q, want %q", got, "last")
	}
}

func lastMark(events []telemetry.Event) string {
	if len(events) == 0 {
		return ""
	}
	var m telemetry.Mark
	_ = events[len(events)-1].Decode(&m)
	return m.Name
}

func TestMalformedTelemetryIsKeptAsEvidence(t *testing.T) {
	var mu sync.Mutex
	var seen []telemetry.Event
	cfg := Config{Deadline: 30 * time.Second, OnEvent: func(ev telemetry.Event) {
		mu.Lock()
		seen = append(seen, ev)
		mu.Unlock()
	}}
	res, _ := run(t, childCmd(t, "malformed"), cfg)
	wantVerdict(t, res, verdict.Completed)
	const want = "malformed,mark,malformed,malformed,mark"
	if got := kinds(res.Events); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	mu.Lock()
	if got := kinds(seen); got != want {
		t.Errorf("OnEvent saw %s, want %s", got, want)
	}
	mu.Unlock()
	if string(res.Events[0].Raw) != `"not json"` || res.Events[1].T != 1.5 {
		t.Errorf("first raw %s, second t %v", res.Events[0].Raw, res.Events[1].T)
	}
	if !strings.Contains(res.Summary(), "3 malformed") {
		t.Errorf("summary:\n%s", res.Summary())
	}
}

func TestCancelKillsPromptly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := Config{Deadline: time.Minute, Mode: Strict, OnEvent: func(ev telemetry.Event) {
		if ev.Ev == telemetry.KindCycle {
			cancel() // the test was interrupted while the child hangs
		}
	}}
	start := time.Now()
	res, err := Run(ctx, childCmd(t, "deadlock"), cfg)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, res, verdict.Interrupted)
	if !res.Killed || res.Cycle == nil || !strings.Contains(res.Reason, "context canceled") {
		t.Errorf("killed %v, cycle %v, reason %q", res.Killed, res.Cycle, res.Reason)
	}
	if elapsed > slack {
		t.Errorf("returned %s after start; the deadline was %s", elapsed, cfg.Deadline)
	}
	assertGone(t, res.Pid)
}

func TestKillAllEndsEveryLiveGroup(t *testing.T) {
	const children = 2
	ready := make(chan struct{}, children)
	results := make(chan *Result, children)
	for range children {
		go func() {
			cfg := Config{Deadline: time.Minute, Mode: Strict, OnEvent: func(ev telemetry.Event) {
				if ev.Ev == telemetry.KindMark {
					ready <- struct{}{}
				}
			}}
			res, err := Run(context.Background(), childCmd(t, "stubborn"), cfg)
			if err != nil {
				t.Error(err)
			}
			results <- res
		}()
	}
	for range children {
		select {
		case <-ready:
		case <-time.After(slack):
			t.Fatal("children did not get ready")
		}
	}
	if n := KillAll(); n != children {
		t.Errorf("KillAll killed %d groups, want %d", n, children)
	}
	for range children {
		select {
		case res := <-results:
			if res == nil {
				continue
			}
			wantVerdict(t, res, verdict.Interrupted)
			if !strings.Contains(res.Reason, "KillAll") {
				t.Errorf("reason %q", res.Reason)
			}
			assertGone(t, res.Pid)
		case <-time.After(slack):
			t.Fatal("Run did not return after KillAll")
		}
	}
	if n := KillAll(); n != 0 {
		t.Errorf("KillAll after the runs found %d groups", n)
	}
}

func TestCallerOwnedStreams(t *testing.T) {
	t.Run("writers are fed and stdout still scanned", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		cmd := childCmd(t, "complete")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		res, _ := run(t, cmd, Config{Deadline: 30 * time.Second})
		wantVerdict(t, res, verdict.Completed)
		if res.Stdout != nil || res.Stderr != nil || stdout.String() != "working\ndone\n" {
			t.Errorf("result stdout %q stderr %q; caller's stdout %q", res.Stdout, res.Stderr, stdout.String())
		}
	})
	t.Run("one writer for both", func(t *testing.T) {
		var combined bytes.Buffer
		cmd := childCmd(t, "exit3")
		cmd.Stdout, cmd.Stderr = &combined, &combined
		res, _ := run(t, cmd, Config{Deadline: 30 * time.Second})
		wantVerdict(t, res, verdict.Failed)
		if !strings.Contains(combined.String(), "partial output") || !strings.Contains(combined.String(), "boom") {
			t.Errorf("combined %q", combined.String())
		}
	})
	t.Run("a file stdout cannot be checked for the marker", func(t *testing.T) {
		f, err := os.CreateTemp(t.TempDir(), "stdout")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := childCmd(t, "complete")
		cmd.Stdout = f
		res, _ := run(t, cmd, Config{Deadline: 30 * time.Second})
		wantVerdict(t, res, verdict.NoMarker)
		if !strings.Contains(res.Reason, "caller's file") || res.Stdout != nil {
			t.Errorf("reason %q, stdout %q", res.Reason, res.Stdout)
		}
		if data, _ := os.ReadFile(f.Name()); string(data) != "working\ndone\n" {
			t.Errorf("file holds %q", data)
		}
	})
}

func TestCallerExtraFilesFollowTelemetry(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := childCmd(t, "fd4")
	cmd.ExtraFiles = []*os.File{w}
	res, _ := run(t, cmd, Config{Deadline: 30 * time.Second})
	w.Close()
	wantVerdict(t, res, verdict.Completed)
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if string(buf[:n]) != "hello on fd 4\n" {
		t.Errorf("fd 4 carried %q", buf[:n])
	}
}

func TestRunRefusesWhatItCannotStart(t *testing.T) {
	if _, err := Run(context.Background(), childCmd(t, "complete"), Config{}); err == nil {
		t.Error("no error without a deadline")
	}
	if _, err := Run(context.Background(), exec.Command("/nonexistent/program"), Config{Deadline: time.Second}); err == nil {
		t.Error("no error for a missing program")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, childCmd(t, "complete"), Config{Deadline: time.Second}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if n := KillAll(); n != 0 {
		t.Errorf("a failed start left %d registered groups", n)
	}
}
