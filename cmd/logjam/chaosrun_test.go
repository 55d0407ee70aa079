package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"logjam/report"
)

// Bad input gets one line and status 2, before anything is built or run.
func TestBadInputIsOneLineAndStatus2(t *testing.T) {
	for _, args := range [][]string{
		{"chaos", "-shard", "5/4"},
		{"chaos", "-shard", "x"},
		{"chaos", "-repeat", "-1"},
		{"chaos", "-slots", "0"},
		{"chaos", "-profile", "nosuch"},
		{"chaos", "extra"},
		{"report", "merge"},
		{"report", "merge", "-out"},
		{"report", "merge", t.TempDir()},
		{"report", "diff", "a"},
	} {
		stderr := captureStderr(t, func() {
			var out bytes.Buffer
			if code := run(args, &out); code != 2 {
				t.Errorf("%v: exit %d, want 2", args, code)
			}
			if out.Len() != 0 {
				t.Errorf("%v wrote to stdout: %q", args, out.String())
			}
		})
		if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.HasPrefix(stderr, "logjam: ") {
			t.Errorf("%v: stderr %q, want one logjam: line", args, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join("..", "..", "suites", "deadlock", ".deadlock-"+strconv.Itoa(os.Getpid())+".test")); err == nil {
		t.Error("a bad command left a suite binary behind")
	}
}

func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = old }()
	f()
	w.Close()
	var b bytes.Buffer
	b.ReadFrom(r)
	return b.String()
}

// The rerun command a cell carries works from a folder deep inside the
// module (it is a shell line: cd to the module root, then Ginkgo).
func TestRerunRunsFromASubfolder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs one suite")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	line := report.Rerun("harness", "H2 calls an exit 0 without done NOMARKER", "local", 7, "")
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = filepath.Join("..", "..", "sim")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Ran 1 of") {
		t.Fatalf("the rerun line failed from sim/: %v\n%s", err, out)
	}
}
