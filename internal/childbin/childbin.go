// Package childbin keeps the child binaries (simrt) that cells ran, by the
// SHA-256 of their bytes, so a cell replays on the very binary it ran; a
// binary no longer kept is rebuilt from the module's source on demand, and
// the caller learns whether the rebuild is the same binary.
//
// The cache is a directory of files named by their digest: Dir() is
// $LOGJAM_BIN_CACHE, or logjam/simrt under the user's cache directory. It
// holds at most MaxKept binaries: keeping one more removes the least
// recently kept or looked up.
package childbin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// CacheEnv overrides the cache directory.
const CacheEnv = "LOGJAM_BIN_CACHE"

// Package is the child's import path, built by Build.
const Package = "logjam/cmd/simrt"

// MaxKept bounds the cache (each binary is a few MiB).
var MaxKept = 16

// Dir is the cache directory (not created).
func Dir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for child binaries (set %s): %v", CacheEnv, err)
	}
	return filepath.Join(base, "logjam", "simrt"), nil
}

// Digest is the hex SHA-256 of the file at path.
func Digest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Keep puts a copy of the binary at path in the cache (once per digest)
// and returns its digest.
func Keep(path string) (string, error) {
	sum, err := Digest(path)
	if err != nil {
		return "", err
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, sum)
	if _, err := os.Stat(dst); err == nil {
		touch(dst)
		return sum, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := copyExecutable(path, dst); err != nil {
		return "", err
	}
	prune(dir, dst)
	return sum, nil
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
		if err != nil || !info.Mode().IsRegular() || len(e.Name()) != sha256.Size*2 {
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

// Lookup returns the cached binary with digest sum.
func Lookup(sum string) (string, bool) {
	dir, err := Dir()
	if err != nil || sum == "" {
		return "", false
	}
	p := filepath.Join(dir, sum)
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	touch(p)
	return p, true
}

// Build builds the child from the module at root into the cache and
// returns its path and digest.
func Build(root string) (path, sum string, err error) {
	dir, err := Dir()
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "simrt")
	cmd := exec.Command("go", "build", "-o", out, Package)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building %s in %s: %v\n%s", Package, root, err, b)
	}
	if sum, err = Digest(out); err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, sum)
	if err := os.Rename(out, path); err != nil {
		return "", "", err
	}
	prune(dir, path)
	return path, sum, nil
}

// Resolve returns the binary with digest sum: the cached one, or else one
// built from the module at root, whose digest (built) may differ; same
// reports whether it is the binary asked for.
func Resolve(root, sum string) (path, built string, same bool, err error) {
	if p, ok := Lookup(sum); ok {
		return p, sum, true, nil
	}
	if root == "" {
		return "", "", false, errors.New("the child binary is not in the cache and no module to rebuild it from")
	}
	path, built, err = Build(root)
	return path, built, err == nil && built == sum, err
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".keep-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
