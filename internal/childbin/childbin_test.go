package childbin

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// keepFile writes body as an executable in a folder of the test's own and
// keeps it: the file's path, the kept copy's path and its digest.
func keepFile(t *testing.T, body string) (src, kept, sum string) {
	t.Helper()
	src = filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	kept, sum, err := Keep(src)
	if err != nil {
		t.Fatal(err)
	}
	return src, kept, sum
}

func TestKeepThenLookupFindsTheSameBytes(t *testing.T) {
	t.Setenv(CacheEnv, t.TempDir())
	src, kept, sum := keepFile(t, "#!/bin/sh\necho kept\n")
	_ = os.Remove(src) // as gexec removes its build at the end of a suite
	p, err := Lookup(sum)
	if err != nil || p != kept {
		t.Fatalf("digest %s not found after Keep: %q %v", sum, p, err)
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
		_, _, sum := keepFile(t, body)
		sums = append(sums, sum)
		// Distinct use times, oldest first, whatever the clock's grain.
		old := time.Now().Add(time.Duration(i-10) * time.Minute)
		_ = os.Chtimes(filepath.Join(dir, sum), old, old)
		if i == 1 {
			if _, err := Lookup(sums[0]); err != nil { // a use: "a" is now the most recent
				t.Fatal("a was dropped too early")
			}
		}
	}
	_, errA := Lookup(sums[0])
	_, errB := Lookup(sums[1])
	_, errC := Lookup(sums[2])
	okA, okB, okC := errA == nil, errB == nil, errC == nil
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

// A kept binary whose bytes changed since is found out before anyone runs
// it: removed, said so, not handed out; the next Keep of the real binary
// heals the entry.
func TestACorruptEntryIsRemovedNotRun(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheEnv, dir)
	var warned strings.Builder
	defer func(w io.Writer) { Warn = w }(Warn)
	Warn = &warned
	marker := filepath.Join(t.TempDir(), "ran")
	src, kept, sum := keepFile(t, "#!/bin/sh\necho kept\n")
	if err := os.WriteFile(kept, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := Lookup(sum); !errors.Is(err, ErrNotKept) {
		t.Fatalf("a corrupt entry was handed out: %q %v", p, err)
	}
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Fatalf("the corrupt entry is still there: %v", err)
	}
	if !strings.Contains(warned.String(), "does not hash to its name") {
		t.Fatalf("nothing said: %q", warned.String())
	}
	if _, _, err := Keep(src); err != nil {
		t.Fatal(err)
	}
	p, err := Lookup(sum)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(p).Output(); err != nil || string(out) != "kept\n" {
		t.Fatalf("the healed entry ran as %q (%v)", out, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the corrupt binary ran")
	}
}

// A name that is not a digest is never joined to the cache directory: a
// file beside the cache is not found, whatever its name says.
func TestLookupRefusesANameThatIsNotADigest(t *testing.T) {
	base := t.TempDir()
	t.Setenv(CacheEnv, filepath.Join(base, "simrt"))
	if err := os.WriteFile(filepath.Join(base, "payload"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../payload", "", strings.Repeat("A", 64), strings.Repeat("a", 63) + "/"} {
		if p, err := Lookup(name); !errors.Is(err, ErrNotKept) {
			t.Errorf("Lookup(%q) = %q, %v", name, p, err)
		}
	}
}

// Runs that keep and look up the same binary at once all get a whole,
// verified entry, and leave no temporary file behind.
func TestConcurrentKeepsShareTheCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheEnv, dir)
	src := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, bytes.Repeat([]byte("x"), 4<<20), 0o755); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, sum, err := Keep(src)
			if err == nil {
				_, err = Lookup(sum)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the cache holds %v, want the one entry", names)
	}
}

// A cache entry swapped after its hash and before its exec (replay -n N
// hashes once and runs N times): the path Lookup returns runs the swapped
// bytes, the private copy LookupVerified made by the hashing read runs the
// bytes that were hashed.
func TestWhatRunsIsWhatWasHashed(t *testing.T) {
	t.Setenv(CacheEnv, filepath.Join(t.TempDir(), "cache"))
	src := filepath.Join(t.TempDir(), "child")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho kept\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept, sum, err := Keep(src)
	if err != nil {
		t.Fatal(err)
	}
	v, err := LookupVerified(sum)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Remove()
	byPath, err := Lookup(sum)
	if err != nil {
		t.Fatal(err)
	}
	// The swap: another binary where the hashed one was.
	swap := kept + ".swap"
	if err := os.WriteFile(swap, []byte("#!/bin/sh\necho swapped\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(swap, kept); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command(byPath).Output(); string(out) != "swapped\n" {
		t.Fatalf("the swap did not take (%q): the test shows nothing", out)
	}
	for i := range 3 {
		if out, err := exec.Command(v.Path).Output(); err != nil || string(out) != "kept\n" {
			t.Fatalf("run %d of the verified copy: %q (%v), want the hashed bytes", i, out, err)
		}
	}
	if info, err := os.Stat(filepath.Dir(v.Path)); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the private copy's folder: %v %v, want mode 0700", info.Mode().Perm(), err)
	}
	v.Remove()
	if _, err := os.Stat(v.Path); !os.IsNotExist(err) {
		t.Errorf("Remove left the copy: %v", err)
	}
}

// A cache folder others can write to is refused, not used.
func TestACacheOthersCanWriteIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	t.Setenv(CacheEnv, dir)
	src := filepath.Join(t.TempDir(), "child")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho kept\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, sum, err := Keep(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := LookupVerified(sum); err == nil || errors.Is(err, ErrNotKept) || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("a world-writable cache: %v, want it refused", err)
	}
	if _, _, err := Keep(src); err == nil {
		t.Error("Keep used a world-writable cache")
	}
}
