package runner

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"logjam/internal/childbin"
	"logjam/internal/testkit"
)

// A suite binary in the cache that no longer hashes to what its build
// recorded is found out before the run execs it: the entry is rebuilt,
// said so on stderr, and the binary handed out is the rebuilt one (the
// planted one never runs).
func TestACorruptSuiteCacheEntryIsRebuiltNotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	// A cache of our own, but the go command's build cache as usual (it
	// lives under XDG_CACHE_HOME too): the standard library is not rebuilt.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":            "module fixture\n\ngo 1.22\n",
		"cmd/simrt/main.go": "package main\n\nfunc main() {}\n",
		// net, whose resolver links libc with cgo on: the suite is built
		// static all the same.
		"suites/x/x_test.go": "package x\n\nimport (\n\t\"net\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) { _ = net.IPv4len }\n",
	} {
		_ = os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fams := []string{"x"}
	// A build hands out each binary while it goes on (ready), at a path of
	// this run's that stays when the build's folder becomes the entry.
	announced := map[string]string{}
	bins, cleanup, cached, err := buildSuites(context.Background(), root, fams, func(name, path string) { announced[name] = path })
	if err != nil {
		t.Fatal(err)
	}
	if cached {
		t.Fatal("a fresh cache claimed the entry was built already")
	}
	for _, name := range []string{"simrt", "x"} {
		if announced[name] == "" || announced[name] != bins[name] {
			t.Errorf("%s: announced %q during the build, handed out %q", name, announced[name], bins[name])
		}
	}
	if out, err := exec.Command(bins["x"], "-test.run", "X").CombinedOutput(); err != nil {
		t.Fatalf("the suite announced during the build does not run once it is done: %v\n%s", err, out)
	}
	if runtime.GOOS == "linux" {
		// Built as the child is (cgo off): no dynamic loader at a suite
		// process's start, and every package compiled once for both.
		f, err := elf.Open(bins["x"])
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the suite is dynamically linked (it names an interpreter)")
			}
		}
		f.Close()
	}
	cleanup()
	if _, err := os.Stat(bins["x"]); !os.IsNotExist(err) {
		t.Errorf("the run's link to the suite outlived cleanup: %v", err)
	}
	entries, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "logjam", "suites-*[^k]"))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v, want one", entries)
	}
	entry := entries[0]
	marker := filepath.Join(t.TempDir(), "ran")
	if err := os.WriteFile(filepath.Join(entry, "x.test"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	stderr := testkit.CaptureStderr(t, func() {
		bins, cleanup, cached, err = buildSuites(context.Background(), root, fams, func(string, string) {})
	})
	defer cleanup()
	if err != nil {
		t.Fatal(err)
	}
	if cached || !strings.Contains(stderr, "is not what was built") || !strings.Contains(stderr, "rebuilding") {
		t.Fatalf("cached=%v, stderr %q: the corrupt entry was not said to be rebuilt", cached, stderr)
	}
	if err := verifyEntry(entry, fams); err != nil {
		t.Fatalf("the rebuilt entry does not verify: %v", err)
	}
	if out, err := exec.Command(bins["x"], "-test.run", "X").CombinedOutput(); err != nil {
		t.Fatalf("the rebuilt suite does not run: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the planted binary ran")
	}
}

// TestAStampedEntryIsHashedAgainOnceABinaryChanged: the stamps that let a
// check skip the hashing never hide a binary written since, even one of
// the same size with its modification time put back.
func TestAStampedEntryIsHashedAgainOnceABinaryChanged(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stamps need the change time (Linux)")
	}
	dir := t.TempDir()
	names := []string{"simrt", "x.test", "y.test"}
	var sums strings.Builder
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\necho "+n+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		sum, err := childbin.Digest(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, n)
	}
	if err := os.WriteFile(filepath.Join(dir, sumsFile), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fams := []string{"x"}
	if err := verifyEntry(dir, fams); err != nil {
		t.Fatalf("a good entry: %v", err)
	}
	// A run of one family stamps every binary of the entry: a whole run
	// after it finds its stamps (and hashes nothing).
	stamped, err := os.ReadFile(filepath.Join(dir, stampsFile))
	if err != nil {
		t.Fatalf("a full check wrote no stamps: %v", err)
	}
	if stamps := entryStamps(dir, names); string(stamped) != stamps {
		t.Fatalf("a check of family x stamped\n%s\nnot the entry's every binary:\n%s", stamped, stamps)
	}
	if err := verifyEntry(dir, fams); err != nil {
		t.Fatalf("a stamped good entry: %v", err)
	}
	bin := filepath.Join(dir, "x.test")
	st, _ := os.Stat(bin)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho xxxxxx\n"), 0o755); err != nil { // same size
		t.Fatal(err)
	}
	_ = os.Chtimes(bin, st.ModTime(), st.ModTime())
	if err := verifyEntry(dir, fams); err == nil || !strings.Contains(err.Error(), "x.test hashes to") {
		t.Fatalf("a binary written after the stamps passed: %v", err)
	}
}

// TestTheSuiteCacheIsPerCheckout: two checkouts of the same sources get
// entries of their own, since a test binary names its sources' paths (an
// Entry's file:line, which reports make relative to the module root):
// one built in another clone printed that clone's absolute paths.
func TestTheSuiteCacheIsPerCheckout(t *testing.T) {
	var keys []string
	for range 2 {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module fixture\n\ngo 1.22\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		k, err := sourceKey(root)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if keys[0] == keys[1] {
		t.Errorf("two checkouts of the same sources share the cache entry %s", keys[0])
	}
}
