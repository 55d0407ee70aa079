package main_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"

	"logjam/internal/testkit"
)

// Two focused runs at once in one tree, beside the last full matrix (one
// with a line per cell, -v, the other with the count): each
// finishes with complete reports in a folder of its own, reports/latest
// still points at the full matrix, and reports/latest-focus at one of the
// two.
func TestTwoRunsAtOnceAndAFocusedRunLeaveTheFullMatrixIntact(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles and runs the suites")
	}
	g := NewWithT(t)
	root := testkit.CopyModule(t)
	full := filepath.Join(root, "reports", "runs", "full")
	g.Expect(os.MkdirAll(full, 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(full, "matrix.json"), []byte("[]"), 0o644)).To(Succeed())
	g.Expect(os.Symlink("runs/full", filepath.Join(root, "reports", "latest"))).To(Succeed())

	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"chaos", "-focus", `H3 `}
			if i == 0 {
				args = append(args, "-v") // a line per cell
			}
			cmd := exec.Command(logjamBin, args...)
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	for i := range outs {
		g.Expect(errs[i]).NotTo(HaveOccurred(), "run %d:\n%s", i, outs[i])
	}
	g.Expect(outs[0]).To(MatchRegexp(`(?m)^logjam: \[1/1\] harness H3 \[verdict\] FAILED as expected$`), "-v: a line per cell")
	g.Expect(outs[1]).To(MatchRegexp(`(?m)^logjam: \[1/1\] specs done \(1 cells, 0 other specs\), 0 not as expected$`), "off a terminal: the count")
	runs, _ := filepath.Glob(filepath.Join(root, "reports", "runs", "*-focus-H3"+"*"))
	g.Expect(runs).To(HaveLen(2), "each run its own folder:\n%s\n%s", outs[0], outs[1])
	for _, dir := range runs {
		for _, f := range []string{"matrix.json", "run.json", "junit.xml", "matrix.html", "matrix.md"} {
			g.Expect(filepath.Join(dir, f)).To(BeARegularFile())
		}
		raw, err := os.ReadFile(filepath.Join(dir, "matrix.json"))
		g.Expect(err).NotTo(HaveOccurred())
		var cells []struct{ ID string }
		g.Expect(json.Unmarshal(raw, &cells)).To(Succeed())
		g.Expect(cells).NotTo(BeEmpty(), "%s holds no cell", dir)
		for _, c := range cells {
			g.Expect(c.ID).To(Equal("H3"), "%s holds another run's cell", dir)
		}
	}
	latest, _ := os.Readlink(filepath.Join(root, "reports", "latest"))
	g.Expect(latest).To(Equal("runs/full"), "a focused run moved the full matrix's pointer")
	focus, _ := os.Readlink(filepath.Join(root, "reports", "latest-focus"))
	g.Expect([]string{filepath.Base(runs[0]), filepath.Base(runs[1])}).To(ContainElement(filepath.Base(focus)))
}

// TestAFocusThatSelectsNothingIsBadInput: a focus no spec matches is one
// line and exit status 2 (as Ginkgo's --fail-on-empty), prints no family's
// "0 cells" line, keeps no run folder and moves no pointer; into a folder
// of the user's own (-out) it is the same line and status, and that folder
// stays.
func TestAFocusThatSelectsNothingIsBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles and runs the suites")
	}
	g := NewWithT(t)
	root := testkit.CopyModule(t)
	own := t.TempDir()
	for _, args := range [][]string{
		{"chaos", "-focus", "ZZZ9 no such cell"},
		{"chaos", "-out", own, "-focus", "ZZZ9 no such cell"},
		{"chaos", "-label-filter", "zzz9-no-such-label"},
	} {
		cmd := exec.Command(logjamBin, args...)
		cmd.Dir = root
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		g.Expect(errors.As(err, &exit)).To(BeTrue(), "%v: exit 0 for an empty focus:\n%s", args, stdout.String())
		g.Expect(exit.ExitCode()).To(Equal(2), "%v", args)
		g.Expect(strings.Split(strings.TrimSpace(stderr.String()), "\n")).To(HaveLen(1), "%v: stderr: %q", args, stderr.String())
		g.Expect(stderr.String()).To(Or(ContainSubstring(`-focus "ZZZ9 no such cell" selects no spec in any family`), ContainSubstring(`-label-filter "zzz9-no-such-label" selects no spec in any family`)))
		g.Expect(stdout.String()).NotTo(ContainSubstring("0 cells"), "%v: an unselected family printed its line", args)
		g.Expect(stdout.String()).NotTo(ContainSubstring("running the"), "%v: the families ran before the empty selection was seen", args)
	}
	runs, _ := filepath.Glob(filepath.Join(root, "reports", "runs", "*"))
	g.Expect(runs).To(BeEmpty(), "the empty run left its folder")
	_, err := os.Lstat(filepath.Join(root, "reports", "latest-focus"))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "latest-focus moved to an empty run")
	g.Expect(own).To(BeADirectory(), "the user's own -out folder was removed")
}

// A focus runs only the families it selects something in (read from the
// built suites before any runs), and flags may follow the families, as
// logjam list takes them.
func TestAFocusRunsOnlyTheFamiliesItSelectsIn(t *testing.T) {
	root := suiteTest(t, "compiles and runs the suites")
	g := NewWithT(t)
	for _, args := range [][]string{
		{"chaos", "-out", t.TempDir(), "-focus", `D1 .*policy=logjam`},
		{"chaos", "deadlock", "fatal", "-out", t.TempDir(), "-focus", `D1 .*policy=logjam`},
	} {
		cmd := exec.Command(logjamBin, args...)
		cmd.Dir = root
		b, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "%v:\n%s", args, b)
		g.Expect(string(b)).To(ContainSubstring("running the 1 families at once"), "%v", args)
		g.Expect(string(b)).To(ContainSubstring("1 cells, 1 as expected, 0 not"), "%v", args)
	}
}

// TestKeepBundlesMakesAnExpectedHangReplayable: a cell as expected leaves
// no bundle (its evidence folder is empty), unless -keep-bundles; then its
// bundle replays to the recorded verdict.
func TestKeepBundlesMakesAnExpectedHangReplayable(t *testing.T) {
	root := suiteTest(t, "compiles and runs the suites")
	g := NewWithT(t)
	run := func(extra ...string) []string {
		out := t.TempDir()
		args := append([]string{"chaos", "-out", out, "-focus", `D1 .*policy=pystderr`}, extra...)
		cmd := exec.Command(logjamBin, args...)
		cmd.Dir = root
		b, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "%s", b)
		bundles, _ := filepath.Glob(filepath.Join(out, "evidence", "*"))
		return bundles
	}
	g.Expect(run()).To(BeEmpty(), "a cell as expected left a bundle without -keep-bundles")
	bundles := run("-keep-bundles")
	g.Expect(bundles).To(HaveLen(1))
	cmd := exec.Command(logjamBin, "replay", bundles[0])
	cmd.Dir = root
	b, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", b)
	g.Expect(string(b)).To(ContainSubstring("observed HANG, recorded HANG (expected HANG): the same"))
}

// ./logjam run from another folder (a binding's own repository, where
// the user keeps their sink) works on the checkout the script names
// (LOGJAM_CHECKOUT); without it, the folder's missing ginkgo.yml is said.
func TestLogjamFromAnotherFolderWorksOnItsCheckout(t *testing.T) {
	g := NewWithT(t)
	root, err := filepath.Abs("../..")
	g.Expect(err).NotTo(HaveOccurred())
	elsewhere := t.TempDir()
	run := func(env ...string) string {
		cmd := exec.Command(logjamBin, "chaos", "-profile", "nosuch")
		cmd.Dir = elsewhere
		cmd.Env = append(os.Environ(), env...)
		b, _ := cmd.CombinedOutput()
		return string(b)
	}
	g.Expect(run()).To(ContainSubstring("no ginkgo.yml in " + elsewhere))
	g.Expect(run("LOGJAM_CHECKOUT=" + root)).To(ContainSubstring(filepath.Join(root, "ginkgo.yml") + ` has no profile "nosuch" (profiles: focus, local, nightly)`))
	g.Expect(run("LOGJAM_CHECKOUT=relative/path")).To(ContainSubstring("no ginkgo.yml in " + elsewhere))
}
