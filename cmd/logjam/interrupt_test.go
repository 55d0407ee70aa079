package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"logjam/calibrate"
	"logjam/internal/testkit"
)

// playing polls for Eventually: the children (simrt) of the run tagged
// tag that play scenario, each as testkit.Tagged shows it.
func playing(tag, scenario string) func() []string {
	return func() []string {
		var found []string
		for _, p := range testkit.Tagged(tag) {
			if strings.Contains(p, "simrt ") && strings.Contains(p, "-scenario "+scenario+" ") {
				found = append(found, p)
			}
		}
		return found
	}
}

// A real SIGINT to a real `logjam chaos` process group, as a terminal's
// Ctrl-C sends it, while a cell hangs (strict mode waits its deadline):
// the run ends within seconds with status 130, renders the cells that ran,
// the interrupted one and a NOTRUN row for the one never started, and
// leaves nothing running.
func TestCtrlCEndsTheRunWithAPartialMatrixAndNothingLeft(t *testing.T) {
	root := suiteTest(t, "compiles and runs the suites")
	g := NewWithT(t)
	tag := fmt.Sprintf("LOGJAM_INTERRUPT_TEST=%d", os.Getpid())
	out := t.TempDir()
	// One spec process per family, so that D2 waits behind D1; the families
	// themselves run at once.
	cmd := exec.Command(logjamBin, "chaos", "-repeat", "1", "-procs", "1", "-out", out,
		"-focus", `C1 .*policy=pystderr|D[12] .*policy=pystderr|U1 .*policy=pystderr.*py=3\.12`)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), tag, "LOGJAM_PROFILE=nightly")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	session, err := gexec.Start(cmd, gbytes.NewBuffer(), gbytes.NewBuffer())
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()

	// Every family but deadlock finishes (capture and utf8 print their
	// line with their cells; a family the focus selects nothing in prints
	// none, so its end is its Ginkgo process's exit, though the random
	// family still walks hundreds of skipped specs), while D1 under pystderr
	// hangs: in strict mode the watchdog waits for its deadline, so the
	// SIGINT lands while that cell runs and D2 waits, and nowhere else.
	g.Eventually(session.Out).WithTimeout(4 * time.Minute).Should(gbytes.Say(`building \d+ suites \(([a-z0-9, ]+)\)`))
	families := regexp.MustCompile(`building \d+ suites \(([a-z0-9, ]+)\)`).FindStringSubmatch(string(session.Out.Contents()))[1]
	g.Eventually(func() []string {
		var waiting []string
		live := strings.Join(testkit.Tagged(tag), "\n")
		for _, fam := range strings.Split(families, ", ") {
			withCells := fam == "capture" || fam == "utf8"
			switch {
			case fam == "deadlock":
			case withCells && !regexp.MustCompile(`logjam: `+fam+` +\d+ cells`).Match(session.Out.Contents()):
				waiting = append(waiting, fam)
			case !withCells && strings.Contains(live, "--json-report="+fam+".r"):
				waiting = append(waiting, fam)
			}
		}
		return waiting
	}).WithTimeout(4*time.Minute).WithPolling(100*time.Millisecond).Should(BeEmpty(), "families other than deadlock still running")
	g.Eventually(playing(tag, "D1")).WithTimeout(4*time.Minute).WithPolling(100*time.Millisecond).ShouldNot(BeEmpty(), "D1 never started")

	g.Expect(syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)).To(Succeed())
	g.Eventually(session).WithTimeout(60 * time.Second).Should(gexec.Exit(130))
	g.Expect(testkit.Tagged(tag)).To(BeEmpty(), "processes of the run still alive after logjam exited")

	stdout := string(session.Out.Contents())
	for _, row := range []string{`C1\s+OK`, `D1\s+!INTERRUPTED/HANG`, `D2\s+NOTRUN`, `U1\s+CRASH`} {
		g.Expect(stdout).To(MatchRegexp(row), "the matrix lacks %s:\n%s", row, stdout)
	}
	g.Expect(stdout).To(ContainSubstring("4 cells, 2 as expected, 1 not, 1 not run (interrupted first)"))
	g.Expect(string(session.Err.Contents())).To(ContainSubstring("interrupted (SIGINT): stopping the families"))

	raw, err := os.ReadFile(filepath.Join(out, "matrix.json"))
	g.Expect(err).NotTo(HaveOccurred())
	var cells []struct{ ID, Family, Policy, Observed string }
	g.Expect(json.Unmarshal(raw, &cells)).To(Succeed())
	observed := map[string]string{}
	for _, c := range cells {
		observed[c.ID+"/"+c.Policy] = c.Observed
	}
	g.Expect(observed).To(Equal(map[string]string{
		"C1/pystderr": "OK", "D1/pystderr": "INTERRUPTED", "D2/pystderr": "NOTRUN", "U1/pystderr": "CRASH",
	}))
}

// A real SIGINT to `logjam calibrate -sink` (its process group, as a
// terminal's Ctrl-C sends it) while a cell of the sink blocks: the run
// ends as chaos's does, status 130, the cell cut short INTERRUPTED, those
// never started NOTRUN, the matrix printed and written, no child left.
func TestCtrlCEndsASinkRunWithAPartialMatrixAndNothingLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the calibration's extension and plays real CPython")
	}
	if _, err := calibrate.Compiler(); err != nil {
		t.Skip("no C++ compiler (g++ or $CXX)")
	}
	py := ""
	for _, in := range calibrate.Discover() {
		if in.Missing == "" {
			py = in.Version
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with its headers")
	}
	g := NewWithT(t)
	root, err := filepath.Abs("../..")
	g.Expect(err).NotTo(HaveOccurred())
	// A sink that writes each line to fd 2, except under python -u, where
	// it never returns: the buffered cell ends, the unbuffered one blocks.
	sink := filepath.Join(t.TempDir(), "stops_unbuffered.cpp")
	g.Expect(os.WriteFile(sink, []byte(`#include "logjam/logjam.hpp"
#include <cstdlib>
#include <unistd.h>
struct StopsUnbuffered : logjam::Sink {
  const char *name() const override { return "stops-unbuffered"; }
  void enter() override {}
  void emit(char, const std::string &line) override {
    if (std::getenv("PYTHONUNBUFFERED")) for (;;) pause();
    (void)!::write(2, line.data(), line.size());
  }
  bool exit() override { return true; }
};
logjam::Sink *logjam_make_sink() { return new StopsUnbuffered(); }
`), 0o644)).To(Succeed())
	tag := fmt.Sprintf("LOGJAM_INTERRUPT_TEST=%d", os.Getpid())
	out := t.TempDir()
	cmd := exec.Command(logjamBin, "calibrate", "-sink", sink, "-py", py, "-rows", "C1,U2", "-out", out)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	session, err := gexec.Start(cmd, gbytes.NewBuffer(), gbytes.NewBuffer())
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()

	g.Eventually(session.Out).WithTimeout(4 * time.Minute).Should(gbytes.Say(`\[1/4\] C1 `))
	g.Eventually(func() []string { // the unbuffered cell's python, blocked in the sink
		var found []string
		for _, p := range testkit.Tagged(tag) {
			if strings.Contains(p, "run_row.py C1 ") {
				found = append(found, p)
			}
		}
		return found
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).ShouldNot(BeEmpty())
	g.Expect(syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)).To(Succeed())
	g.Eventually(session).WithTimeout(60 * time.Second).Should(gexec.Exit(130))
	g.Expect(testkit.Tagged(tag)).To(BeEmpty(), "processes of the run still alive after logjam exited")

	stdout := string(session.Out.Contents())
	for _, row := range []string{`C1 py\S+ unbuffered +!INTERRUPTED/OK`, `U2 py\S+ +NOTRUN`, `U2 py\S+ unbuffered +NOTRUN`, `4 cells, \d as expected, \d not, 2 not run \(interrupted first\)`, `interrupted; the run's folder is `} {
		g.Expect(stdout).To(MatchRegexp(row), "the output lacks %s:\n%s", row, stdout)
	}
	g.Expect(string(session.Err.Contents())).To(ContainSubstring("logjam calibrate: interrupted: the cell playing was killed"))
	raw, err := os.ReadFile(filepath.Join(out, "matrix.json"))
	g.Expect(err).NotTo(HaveOccurred())
	var cells []struct{ Name, Observed string }
	g.Expect(json.Unmarshal(raw, &cells)).To(Succeed())
	g.Expect(cells).To(HaveLen(4))
}
