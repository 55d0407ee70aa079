package policy_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"logjam/harness/cell"
	"logjam/scenario"
	"logjam/signals"
	"logjam/telemetry"
)

// parentSide plays the helper child spec (helperEnv) with the suites' own
// parent side of fd 2 (cell.ArrangeFD2 of kind, stalled or not, answering
// the child's marks), hands each telemetry event to onEvent before the
// parent side acts on it (so a test can plant a slow parent), and returns
// fd 2's bytes and how the child ended. A child that cannot start, or fd 2
// that cannot be read, fails the test; the child's end is the caller's to
// judge, with its events logged when it did not exit 0.
func parentSide(t *testing.T, spec string, kind scenario.FD2, stalled bool, onEvent func(telemetry.Event)) ([]byte, error) {
	t.Helper()
	fd2, err := cell.ArrangeFD2(kind, stalled, 4096)
	if err != nil {
		t.Fatal(err)
	}
	telR, telW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+spec, telemetry.FDEnv+"=3")
	cmd.Stderr, cmd.ExtraFiles = fd2.Child(), []*os.File{telW}
	if err := cmd.Start(); err != nil {
		fd2.Abandon()
		t.Fatal(err)
	}
	telW.Close()
	fd2.AckReads(func() { _ = cmd.Process.Signal(signals.StallAck) })
	stuck := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() }) // a bound on a stuck child, not a timing claim
	defer stuck.Stop()
	var evs []string
	telemetry.Read(telR, func(ev telemetry.Event) {
		evs = append(evs, string(ev.Raw))
		if onEvent != nil {
			onEvent(ev)
		}
		fd2.OnEvent(ev)
	})
	err = cmd.Wait()
	out, cerr := fd2.Collect()
	if cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		for _, e := range evs {
			t.Log(e)
		}
	}
	return out, err
}
