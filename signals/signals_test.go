package signals

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"logjam/telemetry"
)

const childEnv = "SIGNALS_TEST_CHILD"

// TestMain plays the children: each reports on stdout and exits.
func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "die-abort":
		_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
		DieBy(syscall.SIGABRT)
	case "exec-ignoring":
		os.Setenv(childEnv, "report-ignored")
		err := ExecIgnoring(syscall.SIGINT, nil)
		fmt.Println("exec failed:", err)
		os.Exit(1)
	case "start-default":
		os.Setenv(childEnv, "report-ignored")
		err := StartWith(syscall.SIGINT, Default, nil)
		fmt.Println("ignored: already default:", err) // no exec: the parent's disposition was the default
		os.Exit(0)
	case "start-ignored":
		os.Setenv(childEnv, "report-ignored")
		err := StartWith(syscall.SIGINT, Ignored, nil)
		fmt.Println("ignored: already ignored:", err)
		os.Exit(0)
	case "report-ignored":
		fmt.Println("ignored:", signal.Ignored(syscall.SIGINT))
		os.Exit(0)
	case "wait-sigint":
		got := make(chan struct{})
		Bridge(syscall.SIGINT, func() { close(got) })
		fmt.Println("ready")
		<-got
		fmt.Println("got SIGINT")
		os.Exit(0)
	}
	os.Exit(3)
}

func child(t *testing.T, role string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	return cmd
}

func TestName(t *testing.T) {
	if Name(syscall.SIGSEGV) != "SIGSEGV" || Name(syscall.SIGABRT) != "SIGABRT" || Name(syscall.Signal(250)) != "signal 250" {
		t.Fatal(Name(syscall.SIGSEGV), Name(syscall.SIGABRT), Name(syscall.Signal(250)))
	}
}

// A C program's abort(): killed by signal 6, nothing of Go's on fd 2.
func TestDieByIsTheDefaultAction(t *testing.T) {
	if !dieBySupported {
		t.Skip("DieBy resets Go's handler with rt_sigaction, a Linux system call")
	}
	cmd := child(t, "die-abort")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGABRT {
		t.Fatalf("wait status %v, want killed by SIGABRT", ws)
	}
	if stderr.Len() != 0 {
		t.Fatalf("fd 2 got %q", stderr.String())
	}
}

// The re-executed image starts with SIGINT ignored.
func TestExecIgnoringKeepsTheSignalIgnored(t *testing.T) {
	out, err := child(t, "exec-ignoring").Output()
	if err != nil || strings.TrimSpace(string(out)) != "ignored: true" {
		t.Fatalf("child said %q (%v)", out, err)
	}
}

// StartWith gives the program the disposition asked for, whatever its
// caller's: a caller that ignores SIGINT (as `cmd &` does) or one that does
// not.
func TestStartWithSetsTheDispositionWhateverTheCaller(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ trap, role, want string }{
		{`trap "" INT`, "start-default", "ignored: false"},
		{`trap - INT`, "start-default", "ignored: already default: <nil>"},
		{`trap - INT`, "start-ignored", "ignored: true"},
		{`trap "" INT`, "start-ignored", "ignored: already ignored: <nil>"},
	} {
		cmd := exec.Command("sh", "-c", c.trap+`; exec "$0"`, exe)
		cmd.Env = append(os.Environ(), childEnv+"="+c.role)
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("%s from a caller with %s: said %q (%v), want %q", c.role, c.trap, out, err, c.want)
		}
	}
	if _, err := ParseDisposition("sometimes"); err == nil {
		t.Error("ParseDisposition accepted \"sometimes\"")
	}
}

// AtMark sends a real SIGINT on the mark; Bridge delivers it in the child.
func TestAtMarkSendsARealSignalThatBridgeDelivers(t *testing.T) {
	cmd := child(t, "wait-sigint")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, _ := stdout.Read(buf); !strings.HasPrefix(string(buf[:n]), "ready") {
		t.Fatalf("child said %q", buf[:n])
	}
	a := &AtMark{Signal: syscall.SIGINT, Mark: telemetry.MarkSIGINT}
	ev := func(p telemetry.Payload) telemetry.Event {
		b, _ := telemetry.Encode(p, 0)
		e, _ := telemetry.Parse(b)
		return e
	}
	a.OnEvent(ev(telemetry.Mark{Name: telemetry.MarkSIGINT})) // no pid yet: nothing sent
	a.OnEvent(ev(telemetry.Start{Pid: cmd.Process.Pid}))
	a.OnEvent(ev(telemetry.Mark{Name: telemetry.MarkFD2Pause})) // another mark
	a.OnEvent(ev(telemetry.Mark{Name: telemetry.MarkSIGINT}))
	if a.Sent() != 1 {
		t.Fatalf("sent %d signals, want 1", a.Sent())
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("child: %v", err)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the child never got the SIGINT")
	}
}
