package testkit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// startDir is the working directory the test binary started in (go test
// runs it in the package's folder), taken before any test's t.Chdir.
var startDir, startErr = os.Getwd()

// moduleRoot is the nearest folder at or above startDir holding a go.mod.
func moduleRoot() (string, error) {
	if startErr != nil {
		return "", startErr
	}
	for dir := startDir; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("no go.mod at or above " + startDir)
		}
	}
}

// ModuleRoot is the module's root folder: the nearest one holding a go.mod
// at or above the folder the test binary started in (a test's own t.Chdir
// does not move it).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// CopyModule copies the module's tree into t.TempDir() and returns the
// copy: a run there (Ginkgo compiling a suite into its folder, logjam
// writing reports/) touches nothing of the checkout. Left out: folders
// whose name starts with a dot, .git whether a folder or a worktree's
// file (the copy is no git checkout), the top-level reports/, compiled
// tests (*.test) and whatever is not a regular file (links); each file
// keeps its permission bits (./logjam stays executable).
func CopyModule(t testing.TB) string {
	t.Helper()
	dst := t.TempDir()
	if err := copyTree(ModuleRoot(t), dst); err != nil {
		t.Fatalf("copying the module: %v", err)
	}
	return dst
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(name, ".") || rel == "reports") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(name, ".test") || name == ".git" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, info.Mode().Perm())
	})
}
