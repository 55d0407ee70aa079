// Command mutants runs the semantic mutation kit: each mutant in
// mutants.yml is one plausible bug, a find/replace in one file. It is
// applied in a scratch copy of the module (never in the tree), the tests
// and suites that should notice it run there, and the score is killed /
// (killed + survived). Survivors are listed with the bug they stand for.
//
//	go run ./mutants [-only REGEXP] [-list] [-check] [-timeout 6m]
//
// A mutant whose find text does not occur exactly once is STALE, one that
// does not compile (or whose tests go test could not set up or build) is
// INVALID, one whose tests ran past -timeout is TIMEOUT: each is an error
// of the kit, not scored, and fails it (status 2).
// A test pattern that names no package of the module fails the kit before
// anything runs.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"logjam/internal/config"
	"logjam/internal/scratch"
)

// Mutant is one entry of mutants.yml.
type Mutant struct {
	ID      string   `yaml:"id"`
	File    string   `yaml:"file"`
	Find    string   `yaml:"find"`
	Replace string   `yaml:"replace"`
	Test    []string `yaml:"test"` // go test patterns, e.g. ./ledger ./suites/capture
	Bug     string   `yaml:"bug"`  // the plausible bug it stands for
	Guard   string   `yaml:"guard,omitempty"`
}

// Outcomes.
const (
	Killed   = "KILLED"
	Survived = "SURVIVED"
	Stale    = "STALE"
	Invalid  = "INVALID"
	// TimedOut: go test ran past -timeout. Not a kill: the suites judge a
	// hang by their own deadlines, so a mutant's tests that outlive the
	// timeout say only that the machine was slow (or the timeout short).
	TimedOut = "TIMEOUT"
)

type result struct {
	m      Mutant
	status string
	by     string // what killed it, or why it is stale/invalid
	took   time.Duration
}

func main() { os.Exit(run(os.Args[1:], os.Stdout)) }

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "mutants: "+format+"\n", args...)
	return 2
}

func run(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	only := fs.String("only", "", "run only the mutants whose id matches")
	list := fs.Bool("list", false, "list the mutants and exit")
	check := fs.Bool("check", false, "only check that each mutant applies (its find text occurs once)")
	timeout := fs.Duration("timeout", 6*time.Minute, "longest a mutant's tests may run")
	if err := fs.Parse(args); err != nil {
		return fail("%v (usage: go run ./mutants [-only REGEXP] [-list] [-timeout D])", err)
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q (usage: go run ./mutants [-only REGEXP] [-list] [-timeout D])", fs.Arg(0))
	}
	sel, err := regexp.Compile(*only)
	if err != nil {
		return fail("-only %q is not a regular expression: %v", *only, err)
	}
	root, err := config.Root()
	if err != nil {
		return fail("%v", err)
	}
	all, err := load(filepath.Join(root, "cmd", "mutants", "mutants.yml"))
	if err != nil {
		return fail("%v", err)
	}
	var ms []Mutant
	for _, m := range all {
		if sel.MatchString(m.ID) {
			ms = append(ms, m)
		}
	}
	if *list {
		for _, m := range ms {
			fmt.Fprintf(w, "%-36s %-34s %s\n", m.ID, m.File, m.Bug)
		}
		return 0
	}
	if len(ms) == 0 {
		return fail("no mutant matches -only %q", *only)
	}
	if err := checkTests(root, ms); err != nil {
		return fail("%v", err)
	}
	if *check {
		stale := 0
		for _, m := range ms {
			b, err := os.ReadFile(filepath.Join(root, m.File))
			if n := bytes.Count(b, []byte(m.Find)); err != nil || n != 1 {
				stale++
				fmt.Fprintf(w, "stale %s: find text occurs %d times in %s (%v)\n", m.ID, n, m.File, err)
			}
		}
		fmt.Fprintf(w, "%d mutants, %d stale\n", len(ms), stale)
		if stale > 0 {
			return 2
		}
		return 0
	}
	work, err := os.MkdirTemp("", "logjam-mutants-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(work)
	if err := scratch.CopyModule(root, work); err != nil {
		return fail("copying the module: %v", err)
	}
	fmt.Fprintf(w, "mutants: %d, scratch copy %s\n", len(ms), work)
	var results []result
	for i, m := range ms {
		r := runOne(work, m, *timeout)
		results = append(results, r)
		fmt.Fprintf(w, "[%d/%d] %-36s %-8s %5.0fs  %s\n", i+1, len(ms), m.ID, r.status, r.took.Seconds(), r.by)
	}
	return summary(w, results)
}

func summary(w io.Writer, results []result) int {
	count := map[string]int{}
	for _, r := range results {
		count[r.status]++
	}
	scored := count[Killed] + count[Survived]
	fmt.Fprintf(w, "\nscore: %d killed / %d (%.1f%%)", count[Killed], scored, 100*float64(count[Killed])/float64(max(scored, 1)))
	if n := count[Stale] + count[Invalid] + count[TimedOut]; n > 0 {
		fmt.Fprintf(w, "; not scored: %d stale, %d invalid, %d timed out", count[Stale], count[Invalid], count[TimedOut])
	}
	fmt.Fprintln(w)
	for _, r := range results {
		if r.status == Survived {
			fmt.Fprintf(w, "survivor %s (%s): %s\n", r.m.ID, r.m.File, r.m.Bug)
			if r.m.Guard != "" {
				fmt.Fprintf(w, "  why: %s\n", r.m.Guard)
			}
		}
	}
	for _, r := range results {
		if r.status == Stale || r.status == Invalid || r.status == TimedOut {
			fmt.Fprintf(w, "%s %s: %s\n", strings.ToLower(r.status), r.m.ID, r.by)
		}
	}
	if count[Stale]+count[Invalid]+count[TimedOut] > 0 {
		return 2
	}
	if count[Survived] > 0 {
		return 1
	}
	return 0
}

func load(path string) ([]Mutant, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ms []Mutant
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&ms); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	seen := map[string]bool{}
	for i, m := range ms {
		switch {
		case m.ID == "" || m.File == "" || m.Find == "" || len(m.Test) == 0 || m.Bug == "":
			return nil, fmt.Errorf("%s: mutant %d (%q) needs id, file, find, test and bug", path, i+1, m.ID)
		case m.Find == m.Replace:
			return nil, fmt.Errorf("%s: mutant %s changes nothing", path, m.ID)
		case seen[m.ID]:
			return nil, fmt.Errorf("%s: mutant id %s twice", path, m.ID)
		}
		seen[m.ID] = true
	}
	return ms, nil
}

// checkTests refuses a mutant whose test pattern names no package of the
// module: go test of a missing folder fails ([setup failed]), which would
// score as a kill.
func checkTests(root string, ms []Mutant) error {
	for _, m := range ms {
		for _, p := range m.Test {
			dir, ok := strings.CutPrefix(p, "./")
			if !ok {
				return fmt.Errorf("mutant %s: test pattern %q is not a folder of the module (./...)", m.ID, p)
			}
			dir = strings.TrimSuffix(strings.TrimSuffix(dir, "..."), "/")
			if goFiles, _ := filepath.Glob(filepath.Join(root, dir, "*.go")); len(goFiles) == 0 && !strings.HasSuffix(p, "...") {
				return fmt.Errorf("mutant %s: test pattern %q names no Go package of the module", m.ID, p)
			}
			if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
				return fmt.Errorf("mutant %s: test pattern %q names no folder of the module", m.ID, p)
			}
		}
	}
	return nil
}

// setupFailed is go test's word for a package it could not even build or
// set up: the kit's error, never a kill.
var setupFailed = regexp.MustCompile(`(?m)^.*\[(setup|build) failed\].*$`)

// runOne applies m in the scratch copy, builds, tests, and restores the file.
func runOne(scratch string, m Mutant, timeout time.Duration) (r result) {
	start := time.Now()
	r.m = m
	defer func() { r.took = time.Since(start) }()
	path := filepath.Join(scratch, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		r.status, r.by = Stale, err.Error()
		return r
	}
	if n := bytes.Count(orig, []byte(m.Find)); n != 1 {
		r.status, r.by = Stale, fmt.Sprintf("find text occurs %d times in %s, want 1", n, m.File)
		return r
	}
	mutated := bytes.Replace(orig, []byte(m.Find), []byte(m.Replace), 1)
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		r.status, r.by = Invalid, err.Error()
		return r
	}
	defer os.WriteFile(path, orig, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// A mutant of a file that is not Go (logjam.hpp) is built by its
	// tests, which mark a build that failed "[build failed]" (below).
	if strings.HasSuffix(m.File, ".go") {
		if out, err := goCmd(ctx, scratch, "vet", "./"+filepath.Dir(m.File)); err != nil {
			if ctx.Err() != nil {
				r.status, r.by = TimedOut, "go vet ran past -timeout "+timeout.String()+": not scored (rerun it with -only and a longer -timeout)"
				return r
			}
			r.status, r.by = Invalid, "does not build: "+firstMatch(out, regexp.MustCompile(`(?m)^.*\.go:\d+:\d+: .*$`))
			return r
		}
	}
	// -short skips the tests of the CLI that run whole suites again.
	args := append([]string{"test", "-short", "-count=1", "-timeout", timeout.String()}, m.Test...)
	out, err := goCmd(ctx, scratch, args...)
	if err == nil {
		r.status = Survived
		return r
	}
	if m := setupFailed.Find(out); m != nil && ctx.Err() == nil {
		r.status, r.by = Invalid, "go test could not set up or build a package: "+strings.TrimSpace(string(m))
		return r
	}
	if ctx.Err() != nil || testTimeout.Match(out) {
		r.status, r.by = TimedOut, "go test ran past -timeout "+timeout.String()+": not scored (rerun it with -only and a longer -timeout)"
		return r
	}
	r.status, r.by = Killed, killedBy(out)
	return r
}

// testTimeout is a test binary's own -timeout panic.
var testTimeout = regexp.MustCompile(`(?m)^panic: test timed out after `)

var (
	cellFail = regexp.MustCompile(`(?m)\[FAIL\] .*$`)
	testFail = regexp.MustCompile(`(?m)(^\s*--- FAIL: \S+|^FAIL[ \t]+\S+|^panic: .*$)`)
	// gtestFail: a GoogleTest test that failed (the header's tests, run
	// by a Go test that prints their output), each named twice by
	// GoogleTest: once when it ends, once in the summary.
	gtestFail = regexp.MustCompile(`(?m)\[  FAILED  \] (\w+\.\w+)`)
)

// killedBy names what failed in go test's output: the first failing cells
// (Ginkgo's [FAIL] lines), else the first failing GoogleTest tests and the
// Go test that ran them, else the first failing tests.
func killedBy(out []byte) string {
	text := []byte(stripANSI(string(out)))
	ms := cellFail.FindAll(text, 2)
	var parts []string
	if len(ms) == 0 {
		seen := map[string]bool{}
		for _, g := range gtestFail.FindAllSubmatch(text, -1) {
			if name := string(g[1]); !seen[name] && len(seen) < 3 {
				seen[name] = true
				parts = append(parts, name)
			}
		}
		ms = testFail.FindAll(text, 3)
		if len(parts) > 0 {
			ms = ms[:min(len(ms), 1)]
		}
	}
	for _, m := range ms {
		parts = append(parts, strings.Join(strings.Fields(string(m)), " "))
	}
	if len(parts) == 0 {
		return "go test failed: " + firstMatch(out, regexp.MustCompile(`(?m)^.+$`))
	}
	return strings.Join(parts, "; ")
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

func firstMatch(out []byte, re *regexp.Regexp) string {
	if m := re.Find(out); m != nil {
		return strings.TrimSpace(stripANSI(string(m)))
	}
	return strings.TrimSpace(string(out))
}

// goCmd runs go in dir in its own process group; ctx's end kills the group.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// LOGJAM_HEADERTEST_REQUIRED: the header's tests fail ("[setup failed]")
	// where they would skip for want of g++ or GoogleTest, so a header
	// mutant is never scored on tests that did not run.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "LOGJAM_HEADERTEST_REQUIRED=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return out.Bytes(), ctx.Err()
	}
}
