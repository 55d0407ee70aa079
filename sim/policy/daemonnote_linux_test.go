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

	"logjam/ledger"
	"logjam/pipes"
	"logjam/sim"
	"logjam/sim/keep"
	"logjam/sim/policy"
	"logjam/telemetry"
	"logjam/verdict"
)

// helperEnv makes the re-executed test binary play daemonNoRoomChild.
const helperEnv = "LOGJAM_POLICY_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(daemonNoRoomChild(spec))
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
	mk, err := policy.ByName(name)
	if err != nil {
		fmt.Fprintln(os.Stdout, err)
		return 2
	}
	rt, err := sim.New(sim.Options{Platform: sim.Linux, Python: v, Policy: mk})
	if err != nil {
		fmt.Fprintln(os.Stdout, err)
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
	p, err := pipes.New(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	filler := fillPipe(t, p.W)
	tel, err := os.CreateTemp(t.TempDir(), "telemetry")
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound on a stuck child, not a timing claim
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+policyName+" "+python, telemetry.FDEnv+"=3")
	cmd.Stderr, cmd.ExtraFiles = p.W, []*os.File{tel}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.W.Close() // the child's copy is the only writer now
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
	return ledger.Judge(ledger.Contract{}, tr, fd2), fd2
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

// SCENARIOS.md, logjam: "a daemon's lines that cannot be written are
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
