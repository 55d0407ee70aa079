package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// module writes a tiny module: package a (the mutated file) and package b,
// whose test is given.
func module(t *testing.T, bTest string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":      "module m\n\ngo 1.26\n",
		"a/a.go":      "package a\n\nfunc F() int { return 1 }\n",
		"b/b.go":      "package b\n",
		"b/b_test.go": bTest,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var mutant = Mutant{ID: "a-returns-2", File: "a/a.go", Find: "return 1", Replace: "return 2", Test: []string{"./b"}, Bug: "F is off by one"}

// The kit cannot lie: a test package go test cannot set up is the kit's
// error (INVALID, status 2), never a kill; a pattern naming no package of
// the module fails the kit before anything runs; a test that notices the
// mutant kills it.
func TestTheKitCannotCountASetupFailureAsAKill(t *testing.T) {
	broken := module(t, "package b\n\nimport (\n\t\"testing\"\n\t\"m/nosuch\"\n)\n\nfunc TestX(t *testing.T) { nosuch.X() }\n")
	r := runOne(broken, mutant, 2*time.Minute)
	if r.status != Invalid || !strings.Contains(r.by, "[setup failed]") {
		t.Errorf("a test package that cannot be set up: %s (%s), want %s", r.status, r.by, Invalid)
	}
	var w strings.Builder
	if code := summary(&w, []result{r}); code != 2 {
		t.Errorf("summary status %d with an invalid mutant, want 2:\n%s", code, w.String())
	}

	m := mutant
	m.Test = []string{"./sim/pytext"}
	if err := checkTests(broken, []Mutant{m}); err == nil || !strings.Contains(err.Error(), "./sim/pytext") {
		t.Errorf("a test pattern naming no package passed: %v", err)
	}
	if err := checkTests(broken, []Mutant{mutant}); err != nil {
		t.Errorf("a good pattern was refused: %v", err)
	}

	good := module(t, "package b\n\nimport (\n\t\"testing\"\n\t\"m/a\"\n)\n\nfunc TestF(t *testing.T) {\n\tif a.F() != 1 {\n\t\tt.Fatal(\"F\")\n\t}\n}\n")
	if r := runOne(good, mutant, 2*time.Minute); r.status != Killed {
		t.Errorf("a test that notices the mutant: %s (%s), want %s", r.status, r.by, Killed)
	}
}

// Tests that run past the kit's -timeout decide nothing: TIMEOUT, not
// scored, status 2, whether the kit's deadline or the test binary's own
// -timeout ended them first.
func TestTheKitCannotCountATimeoutAsAKill(t *testing.T) {
	slow := module(t, "package b\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestSlow(t *testing.T) { time.Sleep(time.Minute) }\n")
	r := runOne(slow, mutant, 5*time.Second)
	if r.status != TimedOut {
		t.Errorf("tests that outlive the timeout: %s (%s), want %s", r.status, r.by, TimedOut)
	}
	var w strings.Builder
	if code := summary(&w, []result{r, {m: mutant, status: Killed}}); code != 2 || !strings.Contains(w.String(), "1 timed out") {
		t.Errorf("summary status %d with a timed-out mutant, want 2:\n%s", code, w.String())
	}
}

// Every mutant in mutants.yml still applies to today's tree (its find text
// occurs exactly once, its test packages exist): a file split or a renamed
// line makes go test red, not the next full kit run.
func TestEveryMutantStillApplies(t *testing.T) {
	var out strings.Builder
	if code := run([]string{"-check"}, &out); code != 0 {
		t.Fatalf("mutants -check: exit %d\n%s", code, out.String())
	}
}

// A mutant of a file that is not Go (the C++ header) is not vetted (its
// folder holds no Go package) but built by its tests: a test that notices
// it kills it, and a test that says "[build failed]" (the header's tests,
// when the mutant does not compile) makes it the kit's error, not a kill.
func TestAMutantOfAFileThatIsNotGoIsBuiltByItsTests(t *testing.T) {
	bTest := "package b\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestH(t *testing.T) {\n\tb, _ := os.ReadFile(\"../include/h.hpp\")\n\tswitch string(b) {\n\tcase \"int f() { return 1; }\\n\":\n\tcase \"int f() { return 2 }\\n\":\n\t\tt.Fatal(\"[build failed] h.hpp: expected ';'\")\n\tdefault:\n\t\tt.Fatal(\"f is not 1\")\n\t}\n}\n"
	dir := module(t, bTest)
	if err := os.MkdirAll(filepath.Join(dir, "include"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "include", "h.hpp"), []byte("int f() { return 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := Mutant{ID: "h-returns-2", File: "include/h.hpp", Find: "return 1;", Replace: "return 2;", Test: []string{"./b"}, Bug: "f is off by one"}
	if r := runOne(dir, m, 2*time.Minute); r.status != Killed {
		t.Errorf("a header mutant its test notices: %s (%s), want %s", r.status, r.by, Killed)
	}
	m.ID, m.Replace = "h-does-not-compile", "return 2"
	if r := runOne(dir, m, 2*time.Minute); r.status != Invalid {
		t.Errorf("a header mutant that does not compile: %s (%s), want %s", r.status, r.by, Invalid)
	}
}

// A kill by the header's tests names the GoogleTest tests that failed (once
// each, though GoogleTest names each twice), then the Go test that ran them.
func TestAKillByTheHeadersTestsNamesTheirFailures(t *testing.T) {
	out := "--- FAIL: TestTheHeadersOwnRules (20.00s)\n" +
		"    header_test.go:80: the header's tests failed (exit status 1):\n" +
		"        [  FAILED  ] Pty.AReaderThatStopsMidLine (3991 ms)\n" +
		"        [  FAILED  ] Stall.AfterAStall (221 ms)\n" +
		"        [  FAILED  ] 2 tests, listed below:\n" +
		"        [  FAILED  ] Pty.AReaderThatStopsMidLine\n" +
		"        [  FAILED  ] Stall.AfterAStall\n" +
		"FAIL\nFAIL\tlogjam/calibrate/headertest\t20.1s\n"
	want := "Pty.AReaderThatStopsMidLine; Stall.AfterAStall; --- FAIL: TestTheHeadersOwnRules"
	if got := killedBy([]byte(out)); got != want {
		t.Errorf("killedBy: %q, want %q", got, want)
	}
}
