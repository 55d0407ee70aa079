package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"logjam/internal/childbin"
	"logjam/internal/owndir"
	"logjam/internal/scratch"
)

// keepEntries is how many built source states the cache keeps besides
// the ones in use.
const keepEntries = 3

// buildSuites compiles every suite's test binary and the child once per
// state of the sources, into the user's cache (so shards run one after
// another, or a rerun, build once). While it builds, it calls ready with
// each binary's path as soon as that one can run ("simrt" for the child,
// else the family), before the others are built; bins has every path. The
// entry is held with a shared lock until cleanup, so that no other run
// evicts it while it is in use.
func buildSuites(ctx context.Context, root string, fams []string, ready func(name, path string)) (bins map[string]string, cleanup func(), cached bool, err error) {
	bins = map[string]string{}
	var held *os.File
	var run *scratch.Dir // a build's links to its binaries, for this run
	cleanup = func() {
		run.Remove()
		if held != nil {
			held.Close() // releases the lock
		}
	}
	key, err := sourceKey(root)
	if err != nil {
		return nil, cleanup, false, err
	}
	// The suites and the child are built into, and run from, a folder only
	// this user can write: with no cache directory ($HOME unset), a
	// per-user one under the temp dir, never a shared path another user
	// could have made first (owndir).
	base, err := os.UserCacheDir()
	if err == nil {
		base = filepath.Join(base, "logjam")
	} else if base, err = owndir.TempFallback("logjam"); err != nil {
		return nil, cleanup, false, err
	}
	if err := owndir.Ensure(base); err != nil {
		return nil, cleanup, false, fmt.Errorf("the suite cache: %w", err)
	}
	scratch.Sweep(base, "build") // what killed builds left
	scratch.Sweep(base, "run")
	sweepLinks(root, fams)
	dir := filepath.Join(base, "suites-"+key)
	if held, err = lockEntry(dir, syscall.LOCK_SH); err != nil {
		return nil, cleanup, false, err
	}
	if _, err := os.Stat(filepath.Join(dir, "simrt")); err == nil {
		cached = true
		if err := verifyEntry(dir, fams); err != nil {
			fmt.Fprintf(os.Stderr, "logjam: the suite cache entry %s is not what was built (%v): rebuilding it\n", dir, err)
			cached = false
			discardEntry(base, dir)
		}
	}
	names := entryNames(fams)
	if !cached {
		// A family starts while the others still link: its binary is
		// linked (a hard link) into a folder of this run's, whose path
		// stays when the build's folder becomes the entry.
		if run, err = scratch.New(base, "run"); err != nil {
			return nil, cleanup, false, err
		}
		linked := func(name, path string) {
			bins[name] = path
			ready(name, path)
		}
		if err := buildInto(ctx, root, base, dir, fams, run.Dir, linked); err != nil {
			return nil, cleanup, false, err
		}
	}
	evict(base, dir)
	for _, name := range names {
		if bins[name] == "" { // cached, or its link could not be made
			bins[name] = filepath.Join(dir, binaryName(name))
		}
	}
	return bins, cleanup, cached, nil
}

// lockEntry takes a lock on a cache entry's lock file (entry.lock, kept
// while the entry is, so every run locks the same file; sweepLocks removes
// it an hour after its entry is gone) and marks the entry used now.
func lockEntry(entry string, how int) (*os.File, error) {
	f, err := os.OpenFile(entry+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	now := time.Now()
	_ = os.Chtimes(f.Name(), now, now)
	return f, nil
}

// evict removes the entries beyond the keepEntries most recently used,
// except any that a run holds (their lock cannot be taken exclusively).
func evict(base, current string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "suites-*"))
	type entry struct {
		dir  string
		used time.Time
	}
	var es []entry
	for _, dir := range dirs {
		if strings.HasSuffix(dir, ".lock") || dir == current {
			continue
		}
		st, err := os.Stat(dir + ".lock")
		if err != nil {
			st, err = os.Stat(dir)
		}
		if err == nil {
			es = append(es, entry{dir, st.ModTime()})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return b.used.Compare(a.used) })
	for i, e := range es {
		if i < keepEntries-1 {
			continue
		}
		f, err := lockEntry(e.dir, syscall.LOCK_EX|syscall.LOCK_NB)
		if err != nil {
			continue // in use
		}
		os.RemoveAll(e.dir)
		f.Close()
	}
	sweepLocks(base)
}

// orphanLockAge is how long a lock file may outlive its entry: far longer
// than a build, so that no run that opened it to build the entry again is
// still waiting on it.
const orphanLockAge = time.Hour

// sweepLocks removes the lock files whose entry is gone (an evicted one),
// not used for orphanLockAge and held by no run; without it one is left
// for every state of the sources ever built.
func sweepLocks(base string) {
	locks, _ := filepath.Glob(filepath.Join(base, "suites-*.lock"))
	for _, l := range locks {
		dir := strings.TrimSuffix(l, ".lock")
		if _, err := os.Stat(dir); err == nil {
			continue
		}
		st, err := os.Stat(l)
		if err != nil || time.Since(st.ModTime()) < orphanLockAge {
			continue
		}
		f, err := os.OpenFile(l, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.Remove(l)
		}
		f.Close()
	}
}

// sumsFile lists an entry's binaries with their SHA-256, written by the
// build that made the entry.
const sumsFile = "sha256sums"

// verifyEntry hashes the binaries a run is about to exec (the child and
// each family's suite) against the sums their build recorded.
//
// A full check hashes every binary of the entry (about 145 MB, 0.15 s of
// CPU before any family could start). When it passes, each binary's
// inode, size, modification and change times are written beside the sums
// (stampsFile); the next run that finds them all unchanged skips the
// hashing, whichever families it runs (a run of one family stamps them all,
// so the next whole run does not hash again). Any write to a binary, a copy
// or a rename over it changes its change time, which no program sets back:
// such an entry is hashed again. (A platform without the change time
// always hashes.)
func verifyEntry(dir string, fams []string) error {
	want, err := readSums(dir)
	if err != nil {
		return err
	}
	for _, name := range entryNames(fams) {
		if want[binaryName(name)] == "" {
			return fmt.Errorf("%s: not in %s", binaryName(name), sumsFile)
		}
	}
	names := slices.Sorted(maps.Keys(want))
	stamps := entryStamps(dir, names)
	if stamps != "" {
		if was, err := os.ReadFile(filepath.Join(dir, stampsFile)); err == nil && string(was) == stamps {
			return nil
		}
	}
	if err := hashEntry(dir, names, want); err != nil {
		return err
	}
	if stamps != "" {
		writeStamps(dir, stamps)
	}
	return nil
}

// stampsFile holds the stamps of an entry's binaries as of its last full
// check (verifyEntry).
const stampsFile = "stamps"

// entryStamps is one line per binary: name, inode, size, modification and
// change time; "" when a binary cannot be read or the platform has no
// change time.
func entryStamps(dir string, names []string) string {
	var b strings.Builder
	for _, name := range names {
		line := fileStamp(filepath.Join(dir, name))
		if line == "" {
			return ""
		}
		fmt.Fprintf(&b, "%s %s\n", name, line)
	}
	return b.String()
}

// writeStamps replaces the stamps file at once (a rename): two runs that
// checked the same entry write the same bytes.
func writeStamps(dir, stamps string) {
	tmp, err := os.CreateTemp(dir, stampsFile+".*")
	if err != nil {
		return
	}
	_, err = tmp.WriteString(stamps)
	if cerr := tmp.Close(); err == nil && cerr == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, stampsFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// readSums is the sums an entry's build recorded, by binary.
func readSums(dir string) (map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, sumsFile))
	if err != nil {
		return nil, fmt.Errorf("no %s", sumsFile)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if sum, name, ok := strings.Cut(line, "  "); ok {
			want[name] = sum
		}
	}
	return want, nil
}

// hashEntry checks the binaries against the sums the entry's build
// recorded.
func hashEntry(dir string, names []string, want map[string]string) error {
	for _, name := range names {
		got, err := childbin.Digest(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if want[name] != got {
			return fmt.Errorf("%s hashes to %.12s, its build recorded %.12s", name, got, want[name])
		}
	}
	return nil
}

// binaryName is the entry's file of a family's suite, or of the child
// ("simrt").
func binaryName(name string) string {
	if name == "simrt" {
		return name
	}
	return name + ".test"
}

// entryNames are the binaries of an entry for fams: the child ("simrt")
// and each family's suite (binaryName gives their files).
func entryNames(fams []string) []string { return append([]string{"simrt"}, fams...) }

// discardEntry moves a bad entry out of the way (a run that holds it keeps
// its open files) and removes it, so a fresh build can take its name.
func discardEntry(base, dir string) {
	aside, err := os.MkdirTemp(base, "build-discard-")
	if err != nil {
		os.RemoveAll(dir)
		return
	}
	if os.Rename(dir, filepath.Join(aside, "entry")) != nil {
		os.RemoveAll(dir)
	}
	os.RemoveAll(aside)
}

// sweepLinks removes the suite links (suites/<f>/.<f>-<pid>.test) that a
// logjam that ran its suites through Ginkgo's CLI left, of runs that are
// gone.
func sweepLinks(root string, fams []string) {
	for _, f := range fams {
		links, _ := filepath.Glob(filepath.Join(root, "suites", f, "."+f+"-*.test"))
		for _, l := range links {
			pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(l), "."+f+"-"), ".test"))
			if err != nil || pid == os.Getpid() {
				continue
			}
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				os.Remove(l)
			}
		}
	}
}

// buildInto builds into a fresh folder and renames it to dir when complete
// (a cache entry is whole or absent). The suites and the child are built
// by two go commands at once (the toolchain builds test binaries only with
// go test -c, commands only with go build); each binary is hard-linked
// into runDir as soon as the go command moved it into place (a rename:
// whole or absent), and announced with that path.
func buildInto(ctx context.Context, root, base, dir string, fams []string, runDir string, ready func(name, path string)) error {
	scr, err := scratch.New(base, "build")
	if err != nil {
		return err
	}
	defer scr.Remove()
	tmp := filepath.Join(scr.Dir, "entry")
	gotmp := filepath.Join(scr.Dir, "go")
	for _, d := range []string{tmp, gotmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	// Without DWARF the links take a third less CPU; stacks keep their
	// names and lines. Without go test's vet: it computed vet facts for
	// every package the suites import (358 actions, a third of a fresh
	// clone's suite build: go test -c -debug-trace); go vet ./... and
	// ./logjam test vet the suites (a superset of go test's checks).
	tests := []string{"test", "-c", "-vet=off", "-ldflags=-s -w", "-o", tmp + string(filepath.Separator)}
	for _, f := range fams {
		tests = append(tests, "./suites/"+f)
	}
	// The go command, and the compile and link processes it starts, die
	// with logjam however it dies (childbin.GoCommand); its own scratch
	// (GOTMPDIR) is in ours: a killed run leaves one folder, swept next time.
	// The suites are built as the child is (childbin.BuildEnv: cgo off), so
	// that both, and logjam itself (the logjam script builds it so), share
	// one compiled copy of every package: with cgo on for the suites, each
	// package above net was compiled twice in a fresh clone (about 7 s of
	// 2 cores), and a suite process started through the dynamic loader.
	suites := childbin.GoCommand(ctx, tests...)
	suites.Env = childbin.BuildEnv("GOTMPDIR=" + gotmp)
	child := childbin.BuildCommand(ctx, filepath.Join(tmp, "simrt"), "GOTMPDIR="+gotmp)
	cmds := []*exec.Cmd{child, suites}
	outs := make([]bytes.Buffer, len(cmds))
	for i, cmd := range cmds {
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			return err
		}
	}
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchBuilt(tmp, entryNames(fams), runDir, ready, stop)
	}()
	var failed []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v\n%s", strings.Join(cmd.Args[4:7], " "), err, outs[i].Bytes()))
		}
	}
	close(stop)
	<-watched
	if ctx.Err() != nil {
		return errors.New("interrupted while building the suites")
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n"))
	}
	var sums strings.Builder
	for _, name := range entryNames(fams) {
		sum, err := childbin.Digest(filepath.Join(tmp, binaryName(name)))
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, binaryName(name))
	}
	if err := writeSynced(filepath.Join(tmp, sumsFile), []byte(sums.String())); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run with the same sources finished first.
		if _, statErr := os.Stat(filepath.Join(dir, "simrt")); statErr != nil {
			return err
		}
	}
	return nil
}

// watchBuilt announces each of names as it appears in dir (the go command
// renames a linked binary into place: a name that is there is whole),
// hard-linked into runDir; it looks every builtPoll until stop, then once
// more. A name whose link cannot be made is left to the caller, who
// announces it from the entry once the build is done.
func watchBuilt(dir string, names []string, runDir string, ready func(name, path string), stop <-chan struct{}) {
	pending := slices.Clone(names)
	look := func() {
		pending = slices.DeleteFunc(pending, func(name string) bool {
			src := filepath.Join(dir, binaryName(name))
			if st, err := os.Stat(src); err != nil || !st.Mode().IsRegular() {
				return false
			}
			link := filepath.Join(runDir, binaryName(name))
			if os.Link(src, link) == nil {
				ready(name, link)
			}
			return true
		})
	}
	tick := time.NewTicker(builtPoll)
	defer tick.Stop()
	for len(pending) > 0 {
		select {
		case <-stop:
			look()
			return
		case <-tick.C:
			look()
		}
	}
}

// builtPoll is how often a build's folder is looked at for new binaries.
const builtPoll = 100 * time.Millisecond

// writeSynced writes a file and syncs it, so that a crash cannot leave a
// renamed entry with a torn list.
func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sourceKey hashes what the binaries are built from: the module's Go
// build inputs (sources, go.mod, go.sum; every file once a //go:embed
// appears), outside .git, reports and other dot folders, the toolchain's
// settings and the module's folder. Docs and scripts do not force a rebuild.
func sourceKey(root string) (string, error) {
	h := sha256.New()
	var others []string
	embeds := false
	env, err := childbin.GoCommand(context.Background(), "env", "GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %v", err)
	}
	h.Write(env)
	// The module's folder too: a test binary carries its sources' paths
	// (an Entry's file:line, made relative to the module root in reports),
	// so a binary built in another clone names that clone's files
	// (TestTheSuiteCacheIsPerCheckout).
	fmt.Fprintf(h, "root %s\n", root)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || p == filepath.Join(root, "reports")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(name, ".test") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(name, ".go") && bytes.Contains(b, []byte("//go:embed")) {
			embeds = true
		}
		if !buildInput(name) {
			others = append(others, p)
			return nil
		}
		fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(p, root), len(b))
		h.Write(b)
		return nil
	})
	if err == nil && embeds { // an embedded file can be anything: hash them all
		for _, p := range others {
			b, err := os.ReadFile(p)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(p, root), len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20], err
}

// buildInput says whether go build reads a file of this name.
func buildInput(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".s", ".c", ".h", ".cc", ".cpp", ".hh", ".hpp", ".syso":
		return true
	}
	return name == "go.mod" || name == "go.sum"
}
