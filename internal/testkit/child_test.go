package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"logjam/internal/childbin"
)

// The child is built once per test binary, from this module, and runs; a
// copy is a file of the test's own with the same bytes, and removing it
// leaves the shared one.
func TestTheChildIsBuiltOnceAndACopyIsTheTestsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the child")
	}
	bin := Child(t)
	if again := Child(t); again != bin || childRuns != 1 {
		t.Fatalf("a second Child: %q (first %q), %d builds; want the same path, one build", again, bin, childRuns)
	}
	// Bad input: the child exits 2 with one line, before running anything.
	if err := exec.Command(bin, "-scenario", "NOSUCH").Run(); err == nil {
		t.Fatalf("%s -scenario NOSUCH exited 0", bin)
	} else if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
		t.Fatalf("%s -scenario NOSUCH: %v, want exit status 2", bin, err)
	}
	cp := ChildCopy(t)
	if cp == bin || filepath.Dir(cp) == filepath.Dir(bin) {
		t.Fatalf("the copy %s is not in a folder of the test's own (the child is %s)", cp, bin)
	}
	want, err := childbin.Digest(bin)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := childbin.Digest(cp); err != nil || got != want {
		t.Fatalf("the copy's sha256 %.12s (%v), the child's %.12s", got, err, want)
	}
	if info, err := os.Stat(cp); err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Fatalf("the copy is not executable: %v %v", info.Mode(), err)
	}
	if err := os.Remove(cp); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("removing the copy took the child: %v", err)
	}
}
