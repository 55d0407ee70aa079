package headertest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTheHeadersOwnRules builds cpp/header_test.cpp (GoogleTest, the header
// from ../include, an embedded CPython: the header needs a live
// interpreter) into a temporary directory and runs it under a deadline in
// its own process group. It skips, saying why, only when g++ (or $CXX),
// python3-config with Python.h, or GoogleTest (Debian's libgtest-dev) is
// missing (with $LOGJAM_HEADERTEST_REQUIRED set it fails instead). The
// build takes a few seconds: it is not cached.
func TestTheHeadersOwnRules(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("logjam.hpp is Linux-only (pwritev2, /proc/self/fd); this is %s", runtime.GOOS)
	}
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	cxx, err := exec.LookPath(cxx)
	if err != nil {
		skip(t, "no C++ compiler (g++ or $CXX): %v; the header's own tests need one (apt-get install g++)", err)
	}
	pyconf, err := exec.LookPath("python3-config")
	if err != nil {
		skip(t, "no python3-config: %v; the header's tests embed CPython (apt-get install python3-dev)", err)
	}
	pyInc := fields(t, pyconf, "--includes")
	if !hasFile(includeDirs(pyInc), "Python.h") {
		skip(t, "no Python.h under %q (python3-config --includes); apt-get install python3-dev", pyInc)
	}
	pyLd, err := output(pyconf, "--embed", "--ldflags")
	if err != nil {
		t.Fatalf("python3-config --embed --ldflags: %v", err)
	}
	if !hasFile([]string{"/usr/include", "/usr/local/include"}, filepath.Join("gtest", "gtest.h")) || !hasLib(cxx, "gtest") {
		skip(t, "no GoogleTest (gtest/gtest.h and libgtest): apt-get install libgtest-dev")
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "header_test")
	args := []string{"-std=c++17", "-pthread", "-O1", "-Wall", "-I" + filepath.Join("..", "include"), "-I" + "cpp"}
	args = append(args, pyInc...)
	args = append(args, filepath.Join("cpp", "header_test.cpp"), "-o", bin, "-lgtest", "-lgtest_main")
	args = append(args, pyLd...)
	start := time.Now()
	if b, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
		// go test's own mark for a package it could not build: the
		// mutation kit scores a header mutant that does not compile as its
		// own error, never as a kill.
		t.Fatalf("[build failed] building the header's tests: %s %s: %v\n%s", cxx, strings.Join(args, " "), err, b)
	}
	t.Logf("built in %s", time.Since(start).Round(time.Millisecond))

	// A bound on a stuck binary, not a timing claim: the suite takes about
	// 15 s; each child it forks has its own deadline of a few seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--gtest_color=no")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the children it forked, if any is left
	if ctx.Err() != nil {
		t.Fatalf("the header's tests did not end within 3 minutes (killed):\n%s", out.String())
	}
	if err != nil {
		t.Fatalf("the header's tests failed (%v):\n%s", err, out.String())
	}
	if testing.Verbose() {
		t.Logf("%s", out.String())
	}
}

// skip skips the test, saying why; with $LOGJAM_HEADERTEST_REQUIRED set
// (the mutation kit sets it: a header mutant whose tests skipped was not
// tested) it fails with go test's "[setup failed]" mark instead, which the
// kit scores as its own error, never as a kill.
func skip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("LOGJAM_HEADERTEST_REQUIRED") != "" {
		t.Fatalf("[setup failed] "+format, args...)
	}
	t.Skipf(format, args...)
}

func output(name string, args ...string) ([]string, error) {
	b, err := exec.Command(name, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, errors.New(err.Error() + ": " + string(ee.Stderr))
		}
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

func fields(t *testing.T, name string, args ...string) []string {
	t.Helper()
	f, err := output(name, args...)
	if err != nil {
		skip(t, "%s %s: %v", name, strings.Join(args, " "), err)
	}
	return f
}

// includeDirs are the -I directories of flags.
func includeDirs(flags []string) []string {
	var ds []string
	for _, f := range flags {
		if d, ok := strings.CutPrefix(f, "-I"); ok {
			ds = append(ds, d)
		}
	}
	return ds
}

func hasFile(dirs []string, name string) bool {
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return true
		}
	}
	return false
}

// hasLib: cxx finds lib<name> (static or shared) on its library path
// (-print-file-name answers with the bare name when it does not).
func hasLib(cxx, name string) bool {
	for _, f := range []string{"lib" + name + ".so", "lib" + name + ".a"} {
		b, err := exec.Command(cxx, "-print-file-name="+f).Output()
		if err == nil && filepath.IsAbs(strings.TrimSpace(string(b))) {
			return true
		}
	}
	return false
}
