package pipes_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/harness/cell"
	"logjam/harness/ledger"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

var _ = Describe("fd 2 as a pipe or a terminal", func() {
	suitekit.LinuxOnly("one-page pipes (F_SETPIPE_SZ), POLLOUT per page slot, /proc/self/fd and /dev/ptmx")

	DescribeTable("never blocks a GIL holder on a pipe only a GIL waiter drains, and loses no line",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "P1"}}, namesThePipeCycle, verdict.OK, verdict.Hang, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "P2"}}, namesThePipeCycle, verdict.OK, verdict.Hang, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "P3"}}, linesInOrder, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "P4", Platform: "macos"}}, verdict.OK, verdict.Hang, verdict.OK, verdict.Hang, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "P5"}}, verdict.OK, verdict.OK, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "P6"}}, verdict.OK, verdict.Hang, verdict.Hang, verdict.Hang, verdict.Hang, verdict.OK)),
	)
})

// namesThePipeCycle: the GIL holder waits for room on the pipe; the
// forwarder that drains it waits for the GIL.
func namesThePipeCycle(out *cell.Outcome) {
	if out.Observed == verdict.Hang {
		By("naming the cycle: the GIL holder waits for room on the pipe; the forwarder that drains it waits for the GIL")
		Expect(out.Cycle).To(And(
			MatchRegexp(`thread MainThread holds the GIL and .* waits for room on fd 2 \(a pipe\) \(drained by \w+ forwarder\)`),
			MatchRegexp(`thread \w+ forwarder holds nothing and waits for the GIL \(held by MainThread\)`)))
	}
}

// linesInOrder: fd 2's lines complete and in the order they were logged.
func linesInOrder(out *cell.Outcome) {
	if out.Observed == verdict.OK {
		By("finding fd 2's lines complete and in the order they were logged")
		Expect(ledger.OutOfOrder(out.Transcript, out.FD2)).To(BeEmpty())
	}
}
