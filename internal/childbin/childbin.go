// Package childbin keeps the child binaries (simrt) that cells ran, by the
// SHA-256 of their bytes, so a cell replays on the very binary it ran; a
// binary no longer kept is rebuilt from the module's source on demand, and
// the caller learns whether the rebuild is the same binary.
//
// The cache is a directory of files named by their digest: Dir() is
// $LOGJAM_BIN_CACHE, or logjam/simrt under the user's cache directory. It
// holds at most MaxKept binaries: keeping one more removes the least
// recently kept or looked up. A name is a digest (64 lowercase hex digits)
// before it is joined to the directory, and an entry is hashed again before
// it is handed out: one whose bytes no longer match its name is removed
// (and said so on Warn), never run. Entries arrive whole: written to a
// temporary file in the directory, synced, then renamed into place, so
// concurrent runs share the cache.
package childbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"logjam/internal/owndir"
	"logjam/internal/scratch"
)

// CacheEnv overrides the cache directory.
const CacheEnv = "LOGJAM_BIN_CACHE"

// Package is the child's import path, built by Build.
const Package = "logjam/cmd/simrt"

// MaxKept bounds the cache (each binary is a few MiB).
var MaxKept = 16

// Warn receives the line that says a corrupt entry was found and removed.
var Warn io.Writer = os.Stderr

// ErrNotKept: the cache holds no binary with that digest.
var ErrNotKept = errors.New("not in the child binary cache")

// Dir is the cache directory (not created).
func Dir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for child binaries (set %s): %v", CacheEnv, err)
	}
	return filepath.Join(base, "logjam", "simrt"), nil
}

// IsDigest reports whether s is a hex SHA-256 as this cache names files.
func IsDigest(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Digest is the hex SHA-256 of the file at path.
func Digest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return digestOf(f)
}

func digestOf(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Keep puts a copy of the binary at path in the cache (once per digest)
// and returns the kept copy's path and its digest.
func Keep(path string) (kept, sum string, err error) {
	sum, err = Digest(path)
	if err != nil {
		return "", "", err
	}
	if p, err := Lookup(sum); err == nil {
		return p, sum, nil
	}
	dir, err := Dir()
	if err != nil {
		return "", "", err
	}
	if err := owndir.Ensure(dir); err != nil {
		return "", "", err
	}
	in, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer in.Close()
	dst := filepath.Join(dir, sum)
	if err := place(in, dst, sum); err != nil {
		return "", "", err
	}
	prune(dir, dst)
	return dst, sum, nil
}

// place writes r to a temporary file beside dst, syncs it, checks it
// hashes to sum, and renames it to dst (atomic: a reader sees the old
// entry, none, or the whole new one).
func place(r io.Reader, dst, sum string) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".keep-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), r)
	if err == nil {
		err = tmp.Chmod(0o755)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("the binary changed while it was kept (sha256 %.12s, then %.12s)", sum, got)
	}
	return os.Rename(tmp.Name(), dst)
}

// touch marks a binary as used now (the cache drops the least recent).
func touch(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// prune removes the least recently used binaries beyond MaxKept, never keep.
func prune(dir, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type kept struct {
		path string
		used time.Time
	}
	var bins []kept
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !IsDigest(e.Name()) {
			continue
		}
		bins = append(bins, kept{filepath.Join(dir, e.Name()), info.ModTime()})
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].used.After(bins[j].used) })
	for i, b := range bins {
		if i >= MaxKept && b.path != keep {
			_ = os.Remove(b.path)
		}
	}
}

// Lookup returns the cached binary with digest sum, its bytes hashed just
// now (a path: for a run that trusts the cache it made itself;
// LookupVerified for one that must run what it hashed): ErrNotKept when sum is not a digest or the cache has no such regular
// file; an entry whose bytes do not hash to its name is removed, said so on
// Warn, and not kept. Only a file inside the cache is ever looked at.
func Lookup(sum string) (string, error) {
	p, f, err := openKept(sum)
	if err != nil {
		return "", err
	}
	defer f.Close()
	got, err := digestOf(f)
	if err != nil {
		return "", err
	}
	if err := checkSum(p, got, sum); err != nil {
		return "", err
	}
	touch(p)
	return p, nil
}

// openKept opens the cache's entry for sum without following a symlink,
// a regular file only, in a cache directory only this user can write.
func openKept(sum string) (string, *os.File, error) {
	if !IsDigest(sum) {
		return "", nil, ErrNotKept
	}
	dir, err := Dir()
	if err != nil {
		return "", nil, err
	}
	if err := owndir.Check(dir); err != nil {
		if os.IsNotExist(err) {
			return "", nil, ErrNotKept
		}
		return "", nil, err
	}
	p := filepath.Join(dir, sum)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", nil, ErrNotKept
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return "", nil, ErrNotKept
	}
	return p, f, nil
}

// checkSum: an entry whose bytes do not hash to its name is removed.
func checkSum(p, got, sum string) error {
	if got == sum {
		return nil
	}
	_ = os.Remove(p)
	fmt.Fprintf(Warn, "logjam: the cached child binary %s does not hash to its name (sha256 %.12s): removed, not run; it is rebuilt when needed\n", p, got)
	return ErrNotKept
}

// Verified is a private copy of a child binary, made by the very read that
// hashed it: what runs, however often and however long after, is the bytes
// that were hashed (a cache entry swapped between a hash and an exec by
// path would win). Remove deletes it.
type Verified struct {
	Path string
	dir  string
}

// Remove deletes the private copy.
func (v Verified) Remove() {
	if v.dir != "" {
		_ = os.RemoveAll(v.dir)
	}
}

// LookupVerified returns a private copy of the cached binary with digest
// sum (Lookup's rules), hashed as it was copied: what replay runs.
func LookupVerified(sum string) (Verified, error) {
	p, f, err := openKept(sum)
	if err != nil {
		return Verified{}, err
	}
	defer f.Close()
	v, err := copyChecked(f, func(got string) error { return checkSum(p, got, sum) })
	if err == nil {
		touch(p)
	}
	return v, err
}

// VerifiedCopy is a private copy of the binary at path, which must hash
// to sum as it is copied (a build's output, before it runs).
func VerifiedCopy(path, sum string) (Verified, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return Verified{}, err
	}
	defer f.Close()
	return copyChecked(f, func(got string) error {
		if got != sum {
			return fmt.Errorf("%s changed after it was built (sha256 %.12s, built %.12s): not run", path, got, sum)
		}
		return nil
	})
}

// copyChecked is privateCopy of r, kept only if check accepts its digest.
func copyChecked(r io.Reader, check func(got string) error) (Verified, error) {
	v, got, err := privateCopy(r)
	if err != nil {
		return Verified{}, err
	}
	if err := check(got); err != nil {
		v.Remove()
		return Verified{}, err
	}
	return v, nil
}

// privateCopy copies r into a new 0700 directory of this user's, hashing
// the bytes as they go.
func privateCopy(r io.Reader) (Verified, string, error) {
	dir, err := os.MkdirTemp("", "logjam-child-")
	if err != nil {
		return Verified{}, "", err
	}
	v := Verified{Path: filepath.Join(dir, "simrt"), dir: dir}
	out, err := os.OpenFile(v.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		v.Remove()
		return Verified{}, "", err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		v.Remove()
		return Verified{}, "", err
	}
	return v, hex.EncodeToString(h.Sum(nil)), nil
}

// Build builds the child from the module at root into the cache and
// returns its path and digest. The build's scratch folder (and the go
// command's own, GOTMPDIR) is inside the cache, removed when done, and
// swept at the next build if this process was killed.
func Build(root string) (path, sum string, err error) {
	dir, err := Dir()
	if err != nil {
		return "", "", err
	}
	if err := owndir.Ensure(dir); err != nil {
		return "", "", err
	}
	scratch.Sweep(dir, "build")
	tmp, err := scratch.New(dir, "build")
	if err != nil {
		return "", "", err
	}
	defer tmp.Remove()
	out := filepath.Join(tmp.Dir, "simrt")
	cmd := BuildCommand(context.Background(), out, "GOTMPDIR="+tmp.Dir)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building %s in %s: %v\n%s", Package, root, err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	if sum, err = digestOf(f); err != nil {
		return "", "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, sum)
	if err := place(f, path, sum); err != nil {
		return "", "", err
	}
	prune(dir, path)
	return path, sum, nil
}

// Resolve returns the binary with digest sum: the cached one (verified),
// or else one built from the module at root, whose digest (built) may
// differ; same reports whether it is the binary asked for.
func Resolve(root, sum string) (path, built string, same bool, err error) {
	if p, err := Lookup(sum); err == nil {
		return p, sum, true, nil
	} else if !errors.Is(err, ErrNotKept) {
		return "", "", false, err
	}
	if root == "" {
		return "", "", false, errors.New("the child binary is not in the cache and no module to rebuild it from")
	}
	path, built, err = Build(root)
	return path, built, err == nil && built == sum, err
}
