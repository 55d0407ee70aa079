package main_test

import (
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

	"logjam/harness/report"
	"logjam/internal/testkit"
)

// readmeCommands are the commands of README.md's "Two commands" block,
// each without its comment.
func readmeCommands(t *testing.T, root string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Two commands\n+```sh\n(.*?)```").FindSubmatch(raw)
	if m == nil {
		t.Fatal("README.md has no \"## Two commands\" block")
	}
	var cmds []string
	for _, l := range strings.Split(string(m[1]), "\n") {
		if c, _, _ := strings.Cut(l, "#"); strings.TrimSpace(c) != "" {
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	return cmds
}

// runLine starts line (plus extra arguments) in the module root through
// sh, in its own process group as a terminal would, with env added.
func runLine(t *testing.T, root, line, extra string, env ...string) (*exec.Cmd, *gexec.Session) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exec "+line+" "+extra)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s, err := gexec.Start(cmd, gbytes.NewBuffer(), gbytes.NewBuffer())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd, s
}

// The README's main command carries logjam's exit status to a script or
// CI: 2 for bad input, 1 for a cell not as expected, 130 for Ctrl-C (a
// SIGINT to its process group, as a terminal sends it), 0 otherwise. The
// line is read from README.md, so that a README that changes it is tested
// as it reads. (`go run` would fail this: it exits 1 for any non-zero
// status; the last subtest shows it.)
func TestTheReadmesCommandCarriesTheExitStatus(t *testing.T) {
	root := suiteTest(t, "compiles and runs the suites")
	cmds := readmeCommands(t, root)
	if len(cmds) != 2 || cmds[1] != "./logjam test" || !strings.HasSuffix(cmds[0], " chaos") {
		t.Fatalf("README's first screen must keep exactly two commands, the chaos run and `./logjam test`; it has %q", cmds)
	}
	line := cmds[0]
	okCell := `-focus 'D1 .*policy=logjam'`

	t.Run("2 bad input", func(t *testing.T) {
		g := NewWithT(t)
		_, s := runLine(t, root, line, "", "LOGJAM_PROFILE=nosuch")
		g.Eventually(s).WithTimeout(3 * time.Minute).Should(gexec.Exit(2))
		g.Expect(string(s.Err.Contents())).To(ContainSubstring(`has no profile "nosuch"`))
	})
	t.Run("0 as expected", func(t *testing.T) {
		g := NewWithT(t)
		_, s := runLine(t, root, line, okCell+" -out "+t.TempDir())
		g.Eventually(s).WithTimeout(10*time.Minute).Should(gexec.Exit(0), "%s", s.Out.Contents())
		out := string(s.Out.Contents())
		g.Expect(out).To(MatchRegexp(`[1-9]\d* cells, [1-9]\d* as expected, 0 not`))
		// A green run prints the legend too, and no summary of failures.
		g.Expect(out).To(ContainSubstring("\nlegend:\n"))
		for _, l := range report.Legend {
			g.Expect(out).To(ContainSubstring("\n  "+l+"\n"), "the legend of a green run")
		}
		g.Expect(out).NotTo(MatchRegexp(`(?m)^\d+ not as expected:$`))
	})
	t.Run("1 a cell not as expected", func(t *testing.T) {
		// A deadline of 20 ns (20 s x 1e-9) for a cell whose terminal
		// pauses 300 ms: the watchdog adds only the time a child waited for
		// a CPU (a loaded CI), never a sleep, so the OK cell is not OK. (D1
		// here finished inside its CPU-wait credit on a loaded CI.)
		g := NewWithT(t)
		_, s := runLine(t, root, line, `-focus 'P3 .*policy=logjam' -out `+t.TempDir(), "LOGJAM_TIMEOUT_SCALE=0.000000001")
		g.Eventually(s).WithTimeout(10*time.Minute).Should(gexec.Exit(1), "%s", s.Out.Contents())
		out := string(s.Out.Contents())
		g.Expect(out).To(MatchRegexp(`\d+ cells, 0 as expected, [1-9]\d* not`))
		// Each cell not as expected is summed up once at the end: its
		// Entry's line and name, expected and observed, its reason, the
		// replay of its bundle (which exists) and its rerun command.
		_, summary, ok := strings.Cut(out, "\n1 not as expected:\n")
		g.Expect(ok).To(BeTrue(), "no summary of the failing cell:\n%s", out)
		g.Expect(summary).To(MatchRegexp(`^suites/pipes/pipes_test\.go:\d+: pipes P3 \S+ \[policy=logjam [^]]*\]: expected OK, observed HANG\n  reason: did not finish`))
		bundle := regexp.MustCompile(`(?m)^  evidence: \./logjam replay (\S+)$`).FindStringSubmatch(summary)
		g.Expect(bundle).NotTo(BeNil(), "the summary names no bundle:\n%s", summary)
		g.Expect(filepath.Join(bundle[1], "cell.json")).To(BeAnExistingFile())
		g.Expect(summary).To(MatchRegexp(`(?m)^  rerun: cd "\$\(go list -m -f '\{\{\.Dir\}\}'\)" && LOGJAM_PROFILE=local LOGJAM_SEED=\d+ LOGJAM_TIMEOUT_SCALE=0\.000000001 \./logjam ginkgo --focus 'P3 .*' \./suites/pipes$`))
		g.Expect(strings.Count(out, "rerun: ")).To(Equal(1), "the rerun line printed more than once")
	})
	t.Run("130 Ctrl-C", func(t *testing.T) {
		// Strict mode waits for D1 under pystderr (a hang) until its
		// deadline: the SIGINT lands while that cell runs.
		g := NewWithT(t)
		tag := fmt.Sprintf("LOGJAM_README_TEST=%d", os.Getpid())
		cmd, s := runLine(t, root, line, `-focus 'D1 .*policy=pystderr' -out `+t.TempDir(), tag, "LOGJAM_PROFILE=nightly")
		g.Eventually(playing(tag, "D1")).WithTimeout(8*time.Minute).WithPolling(100*time.Millisecond).ShouldNot(BeEmpty(), "D1 never started")
		g.Expect(syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)).To(Succeed())
		g.Eventually(s).WithTimeout(90 * time.Second).Should(gexec.Exit(130))
		g.Expect(string(s.Out.Contents())).To(ContainSubstring("INTERRUPTED"))
		// The terminal signals the whole group and go tool passes its
		// SIGINT on: one Ctrl-C, never taken for a second one.
		g.Expect(string(s.Err.Contents())).NotTo(ContainSubstring("killing the families"))
		g.Expect(testkit.Tagged(tag)).To(BeEmpty(), "processes of the run still alive after it exited")
	})
	t.Run("go run would lose the status", func(t *testing.T) {
		g := NewWithT(t)
		_, s := runLine(t, root, "go run ./cmd/logjam chaos", "", "LOGJAM_PROFILE=nosuch")
		g.Eventually(s).WithTimeout(3 * time.Minute).Should(gexec.Exit(1))
	})
}
