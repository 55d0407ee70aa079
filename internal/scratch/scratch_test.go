package scratch

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const helperEnv = "SCRATCH_TEST_HELPER_PARENT"

// The helper makes a scratch folder under the parent it is given, prints
// it and waits to be killed.
func TestMain(m *testing.M) {
	if parent := os.Getenv(helperEnv); parent != "" {
		d, err := New(parent, "build")
		if err != nil {
			os.Exit(3)
		}
		os.WriteFile(filepath.Join(d.Dir, "big"), make([]byte, 1<<20), 0o644)
		os.Stdout.WriteString(d.Dir + "\n")
		select {}
	}
	os.Exit(m.Run())
}

// A folder whose owner was killed with SIGKILL (no deferred cleanup ran) is
// swept; a live owner's folder, and a folder of another prefix, are not.
func TestSweepRemovesWhatAKilledOwnerLeftAndNothingElse(t *testing.T) {
	parent := t.TempDir()
	var killed []string
	for i := 0; i < 3; i++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+parent)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		killed = append(killed, line[:len(line)-1])
	}
	live, err := New(parent, "build")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	other := filepath.Join(parent, "suites-abc")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if n := Sweep(parent, "build"); n != len(killed) {
		t.Errorf("swept %d folders, want %d", n, len(killed))
	}
	for _, d := range killed {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", d, err)
		}
	}
	for _, d := range []string{live.Dir, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	live.Remove()
	if _, err := os.Stat(live.Dir); !os.IsNotExist(err) {
		t.Errorf("Remove left %s", live.Dir)
	}
}
