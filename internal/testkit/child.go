package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"logjam/internal/childbin"
)

var (
	childOnce sync.Once
	childPath string
	childErr  error
	childRuns int // builds asked of the go command, for the kit's own test
)

// ChildPath is the child binary (logjam/cmd/simrt) as every product
// caller gets it: childbin.CachedCommand (`go tool -n simrt`, the go
// command's cached build, cgo off), asked once per test binary. It takes
// no testing.TB, for a TestMain; a test calls Child.
func ChildPath() (string, error) {
	childOnce.Do(func() {
		childRuns++
		root, err := moduleRoot()
		if err != nil {
			childErr = err
			return
		}
		cmd := childbin.CachedCommand(context.Background())
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				err = fmt.Errorf("%v\n%s", err, exit.Stderr)
			}
			childErr = fmt.Errorf("building the child (go tool -n simrt): %w", err)
			return
		}
		childPath = strings.TrimSpace(string(out))
	})
	return childPath, childErr
}

// Child is the child binary's path; a build that fails fails the test.
// The binary is shared by every test of the process and lives in the go
// command's cache: run it, never change or remove it (ChildCopy gives a
// file of the test's own).
func Child(t testing.TB) string {
	t.Helper()
	bin, err := ChildPath()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// ChildCopy is a copy of the child in t.TempDir(), executable, for a test
// that removes or changes the binary it ran (as gexec removes a suite's
// build when the suite ends).
func ChildCopy(t testing.TB) string {
	t.Helper()
	src := Child(t)
	dst := filepath.Join(t.TempDir(), "simrt")
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}
