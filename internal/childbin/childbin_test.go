package childbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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

func TestTheCacheKeepsTheMostRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheEnv, dir)
	defer func(n int) { MaxKept = n }(MaxKept)
	MaxKept = 2
	var sums []string
	for i, body := range []string{"a", "b", "c"} {
		src := filepath.Join(t.TempDir(), "bin")
		if err := os.WriteFile(src, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		sum, err := Keep(src)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
		// Distinct use times, oldest first, whatever the clock's grain.
		old := time.Now().Add(time.Duration(i-10) * time.Minute)
		_ = os.Chtimes(filepath.Join(dir, sum), old, old)
		if i == 1 {
			if _, ok := Lookup(sums[0]); !ok { // a use: "a" is now the most recent
				t.Fatal("a was dropped too early")
			}
		}
	}
	_, okA := Lookup(sums[0])
	_, okB := Lookup(sums[1])
	_, okC := Lookup(sums[2])
	if !okA || okB || !okC {
		t.Fatalf("kept a=%v b=%v c=%v, want the least recently used (b) dropped", okA, okB, okC)
	}
}

func TestResolveRebuildsAMissingBinaryAndSaysItDiffers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds simrt")
	}
	t.Setenv(CacheEnv, t.TempDir())
	root, err := filepath.Abs(filepath.Join("..", ".."))
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
