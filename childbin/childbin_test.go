package childbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestKeepThenLookupFindsTheSameBytes(t *testing.T) {
	t.Setenv(CacheEnv, t.TempDir())
	src := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho kept\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := Keep(src)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(src) // as gexec removes its build at the end of a suite
	p, ok := Lookup(sum)
	if !ok {
		t.Fatalf("digest %s not found after Keep", sum)
	}
	out, err := exec.Command(p).Output()
	if err != nil || string(out) != "kept\n" {
		t.Fatalf("the kept binary ran as %q (%v)", out, err)
	}
	if again, _ := Digest(p); again != sum {
		t.Fatalf("kept bytes differ: %s != %s", again, sum)
	}
}

func TestResolveRebuildsAMissingBinaryAndSaysItDiffers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds simrt")
	}
	t.Setenv(CacheEnv, t.TempDir())
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	path, built, same, err := Resolve(root, "0000")
	if err != nil {
		t.Fatal(err)
	}
	if same || built == "0000" {
		t.Fatalf("a rebuild claimed to be the missing binary")
	}
	if out, err := exec.Command(path, "-list").Output(); err != nil || len(out) == 0 {
		t.Fatalf("the rebuilt child does not run: %v", err)
	}
	// A second resolve of the rebuilt digest finds it kept.
	p2, _, same2, err := Resolve(root, built)
	if err != nil || !same2 || p2 != path {
		t.Fatalf("the rebuilt binary is not found by its digest: %s %v %v", p2, same2, err)
	}
}
