package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTestLinesAreGoTestsLinesWithTheSkipsSaid: go test -json through
// testLines gives go test's own lines for a module with a passing, a
// skipping and a failing test, a package that only skips and one with no
// test files, except that each "ok" line names what skipped, and why.
func TestTestLinesAreGoTestsLinesWithTheSkipsSaid(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module gt\n\ngo 1.22\n",
		"a/a_test.go": `package a

import "testing"

func TestPass(t *testing.T) { t.Log("quiet") }
func TestSkip(t *testing.T) { t.Skip("needs LOGJAM_X=1") }
func TestFail(t *testing.T) {
	t.Log("boom")
	t.Run("sub", func(t *testing.T) { t.Error("sub failed") })
}
`,
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestOnlySkip(t *testing.T) { t.Skip(\"opt-in\") }\n",
		"c/c.go":      "package c\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		cmd := exec.Command("go", append([]string{"test", "-count=1"}, args...)...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout = &out
		_ = cmd.Run() // a test fails: exit status 1
		return out.String()
	}
	plain := run("./...")
	var got bytes.Buffer
	lines := newTestLines(&got)
	lines.Write([]byte(run("-json", "./...")))
	lines.close()

	times := regexp.MustCompile(`\t[0-9.]+s`)
	norm := func(s string) string { return times.ReplaceAllString(s, "\tTs") }
	// go test's own lines, each there (the last FAIL is go test's own
	// summary, which -json leaves out).
	for _, l := range strings.Split(strings.TrimSuffix(norm(plain), "FAIL\n"), "\n") {
		if l != "" && !strings.Contains(norm(got.String()), strings.TrimSpace(l)) {
			t.Errorf("go test's line %q is missing from:\n%s", l, got.String())
		}
	}
	for _, want := range []string{
		"    a_test.go:9: sub failed\n",
		"FAIL\tgt/a\tTs\n",
		"ok  \tgt/b\tTs (skipped: TestOnlySkip: opt-in)\n",
		"?   \tgt/c\t[no test files]\n",
	} {
		if !strings.Contains(norm(got.String()), want) {
			t.Errorf("no line %q in:\n%s", want, got.String())
		}
	}
	for _, not := range []string{"quiet", "=== RUN", "--- PASS"} {
		if strings.Contains(got.String(), not) {
			t.Errorf("%q shown (go test shows a passing test's output only with -v):\n%s", not, got.String())
		}
	}
}
