package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The root is this module's: its go.mod names logjam and it holds
// internal/testkit; a t.Chdir elsewhere does not move it.
func TestModuleRootIsTheModulesRoot(t *testing.T) {
	root := ModuleRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module logjam\n") {
		t.Fatalf("%s/go.mod: %v %.40q", root, err, mod)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testkit", "module.go")); err != nil {
		t.Fatalf("the root %s does not hold this package: %v", root, err)
	}
	t.Chdir(t.TempDir())
	if again := ModuleRoot(t); again != root {
		t.Errorf("after a Chdir the root is %s, was %s", again, root)
	}
}

// A copy holds the sources with their permissions, and leaves out dot
// folders, .git as a worktree's file, the top-level reports/, compiled
// tests and links.
func TestCopyTreeLeavesOutDotFoldersReportsTestsAndLinks(t *testing.T) {
	src := t.TempDir()
	for name, mode := range map[string]os.FileMode{
		"go.mod": 0o644, "logjam": 0o755, "cmd/simrt/main.go": 0o644, "sim/reports/keep.go": 0o644,
		".git/HEAD": 0o644, "reports/latest/matrix.json": 0o644, "suites/utf8/.utf8-1.test": 0o755, "cmd/.cache/x": 0o644, "sub/.git": 0o644, ".gitignore": 0o644,
	} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("go.mod", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{".gitignore": 0o644, "go.mod": 0o644, "logjam": 0o755, "cmd/simrt/main.go": 0o644, "sim/reports/keep.go": 0o644} {
		b, err := os.ReadFile(filepath.Join(dst, name))
		info, _ := os.Stat(filepath.Join(dst, name))
		if err != nil || string(b) != name || info.Mode().Perm() != mode {
			t.Errorf("%s: %q %v (%v), want its bytes and %v", name, b, info.Mode(), err, mode)
		}
	}
	for _, name := range []string{".git", "reports", "suites/utf8/.utf8-1.test", "cmd/.cache", "sub/.git", "link"} {
		if _, err := os.Lstat(filepath.Join(dst, name)); err == nil {
			t.Errorf("%s was copied", name)
		}
	}
}

// CopyModule copies this module: its go.mod and the child's main are there.
func TestCopyModuleCopiesThisModule(t *testing.T) {
	dst := CopyModule(t)
	for _, name := range []string{"go.mod", "cmd/simrt/main.go", "internal/testkit/module.go"} {
		if _, err := os.Stat(filepath.Join(dst, name)); err != nil {
			t.Errorf("the copy has no %s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); err == nil {
		t.Error("the copy has .git")
	}
}
