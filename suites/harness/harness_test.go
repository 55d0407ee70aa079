package harness_test

import (
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/failpoints"
	"logjam/harness/cell"
	"logjam/internal/testkit"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

var _ = Describe("The watchdog", Label("harness"), func() {
	It("H1 calls a deadlock a HANG as soon as the child reports the cycle (at the deadline in strict mode), names it, and leaves no process of the group", Label("negative-control"), func(ctx SpecContext) {
		out := suitekit.Check(ctx, cell.Spec{Cell: scenario.Cell{Scenario: "H1"}}, verdict.Hang)
		Expect(out.Cycle).To(And(
			ContainSubstring("thread A holds lock X and waits for lock Y (held by B)"),
			ContainSubstring("thread B holds lock Y and waits for lock X (held by A)")))
		Expect(out.Result.Killed).To(BeTrue())
		if suitekit.Profile.Mode == "strict" {
			Expect(out.Result.Duration).To(BeNumerically(">=", suitekit.Profile.ScaledDeadline()),
				"strict mode confirms the hang at the deadline")
		} else {
			Expect(out.Result.Duration).To(BeNumerically("<", suitekit.Profile.ScaledDeadline()/2),
				"the fast path answers on the cycle, not at the deadline")
		}
		Expect(testkit.Gone(-out.Result.Pid)).To(BeTrue(), "a process of the child's group is still alive")
	})

	It("H2 calls an exit 0 without done NOMARKER", Label("negative-control"), func(ctx SpecContext) {
		suitekit.Check(ctx, cell.Spec{Cell: scenario.Cell{Scenario: "H2"}}, verdict.NoMarker)
	})

	It("H3 reports an exit 3 as FAILED with its stdout and stderr, never as a deadlock", Label("negative-control"), func(ctx SpecContext) {
		out := suitekit.Check(ctx, cell.Spec{Cell: scenario.Cell{Scenario: "H3"}}, verdict.Failed)
		Expect(out.Result.ExitCode).To(Equal(3))
		Expect(out.Reason).To(ContainSubstring("status 3"))
		Expect(string(out.Result.Stdout)).To(ContainSubstring("about to fail"))
		Expect(string(out.FD2)).To(ContainSubstring("H3: failing on purpose"))
		Expect(out.Cycle).To(BeEmpty())
	})

	It("H4 reports a child killed by SIGSEGV as a CRASH naming the signal", Label("negative-control"), func(ctx SpecContext) {
		out := suitekit.Check(ctx, cell.Spec{Cell: scenario.Cell{Scenario: "H4"}}, verdict.Crash)
		Expect(out.Result.Signal).To(Equal("SIGSEGV"))
		Expect(out.Reason).To(ContainSubstring("SIGSEGV"))
	})

	DescribeTable("H5 refuses bad failpoints before the child starts: an ERROR row of the matrix, with the reason",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.CellThen(cell.Spec{Cell: scenario.Cell{Scenario: "H5"}, Failpoints: failpoints.Set{{Name: "logjam/no-such-point", Terms: "return(1)"}}}, verdict.Error, refusedBeforeStart("unknown failpoint")),
		suitekit.CellThen(cell.Spec{Cell: scenario.Cell{Scenario: "H5"}, Failpoints: failpoints.Set{{Name: failpoints.Probe, Terms: "retrun(1)"}}}, verdict.Error, refusedBeforeStart("malformed terms")),
		suitekit.CellThen(cell.Spec{Cell: scenario.Cell{Scenario: "H5"}, Failpoints: failpoints.Set{{Name: failpoints.StreamWriteInterrupt, Terms: `return("sideways")`}}}, verdict.Error, refusedBeforeStart("one of")),
	)

	DescribeTable("H5 a GO_FAILPOINTS value is refused with the reason",
		func(env, reason string) {
			set, err := failpoints.Parse(env)
			Expect(err).To(MatchError(ContainSubstring(reason)))
			Expect(set).To(BeNil())
		},
		Entry("malformed entry", "logjam/probe", "malformed GO_FAILPOINTS entry"),
		Entry("unknown point", "logjam/nope=return(1)", "unknown failpoint"),
		Entry("malformed terms", "logjam/probe=retrun(1)", "malformed terms"),
		Entry("a term that does not fit the point", `logjam/stream-write-interrupt=return("sideways")`, "one of"),
	)

	It("H5 the child refuses an unknown failpoint itself with exit 2 and one line", Label("negative-control"), func() {
		cmd := exec.Command(suitekit.Bin, "-scenario", "C1")
		cmd.Env = append(cmd.Environ(), "GO_FAILPOINTS=logjam/nope=return(1)")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		Expect(errors.As(err, &ee)).To(BeTrue())
		Expect(ee.ExitCode()).To(Equal(2))
		Expect(strings.Count(strings.TrimSpace(string(out)), "\n")).To(Equal(0), "one line: %s", out)
		Expect(string(out)).To(ContainSubstring("unknown failpoint"))
	})

	// SpecPriority: H6 waits its 2 s deadline; started first, the family's
	// other specs run meanwhile instead of after it.
	It("H6 kills a grandchild that holds stdout open, at the deadline, and returns within the grace period", Label("negative-control"), SpecPriority(1), func(ctx SpecContext) {
		deadline := 2 * time.Second
		out := suitekit.Check(ctx, cell.Spec{Cell: scenario.Cell{Scenario: "H6"}, Deadline: deadline}, verdict.Hang)
		m := regexp.MustCompile(`grandchild (\d+)`).FindSubmatch(out.Result.Stdout)
		Expect(m).NotTo(BeNil(), "the child names its grandchild")
		grandchild, _ := strconv.Atoi(string(m[1]))
		Expect(testkit.Gone(grandchild)).To(BeTrue(), "the grandchild is still alive")
		Expect(testkit.Gone(-out.Result.Pid)).To(BeTrue())
		scaled := time.Duration(float64(deadline) * suitekit.Profile.TimeoutScale)
		grace := max(time.Duration(float64(suitekit.Profile.GraceFloor)*suitekit.Profile.TimeoutScale), scaled/20)
		Expect(out.Result.Duration).To(BeNumerically("<", scaled+grace+5*time.Second))
	})
})

// refusedBeforeStart: no child ran, and the reason says why.
func refusedBeforeStart(reason string) suitekit.Then {
	return func(out *cell.Outcome) {
		Expect(out.Result).To(BeNil(), "a child was started")
		Expect(out.Reason).To(ContainSubstring(reason))
	}
}

var _ = Describe("simrt", Label("harness"), func() {
	DescribeTable("refuses bad input with one line and exit status 2, running nothing",
		func(want string, args ...string) {
			cmd := exec.Command(suitekit.Bin, args...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			Expect(errors.As(err, &ee)).To(BeTrue(), "exit status: %v, output %s", err, out)
			Expect(ee.ExitCode()).To(Equal(2))
			Expect(strings.TrimSpace(string(out))).NotTo(ContainSubstring("\n"))
			Expect(string(out)).To(ContainSubstring(want))
			Expect(string(out)).NotTo(ContainSubstring("done"))
		},
		Entry("an unknown scenario", "unknown scenario", "-scenario", "Z9"),
		Entry("an unknown policy", "unknown policy", "-scenario", "D1", "-policy", "nope"),
		Entry("an unknown platform", "unknown platform", "-scenario", "D1", "-platform", "windows"),
		Entry("an unknown Python version", "unknown Python version", "-scenario", "D1", "-python", "2.7"),
		Entry("an unknown flag", "flag provided but not defined", "-scenario", "D1", "-frobnicate"),
		Entry("no scenario", "-scenario is required"),
		Entry("an unknown SIGINT disposition", `unknown signal disposition "sometimes" (accepted: default, ignored)`, "-scenario", "D1", "-sigint", "sometimes"),
	)
})
