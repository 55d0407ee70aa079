package pipes_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/harness/cell"
	"logjam/harness/ledger"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

var _ = Describe("fd 2 as a pipe or a terminal", func() {
	suitekit.LinuxOnly("one-page pipes (F_SETPIPE_SZ), POLLOUT per page slot, /proc/self/fd and /dev/ptmx")

	DescribeTable("never blocks a GIL holder on a pipe only a GIL waiter drains, and loses no line",
		func(ctx SpecContext, spec cell.Spec, expected string, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.RowThen(cell.Spec{Scenario: "P1"}, namesThePipeCycle, "OK", "HANG", "OK", "OK", "OK", "OK"),
			suitekit.RowThen(cell.Spec{Scenario: "P2"}, namesThePipeCycle, "OK", "HANG", "OK", "OK", "OK", "OK"),
			suitekit.RowThen(cell.Spec{Scenario: "P3"}, linesInOrder, "OK", "OK", "OK", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "P4", Platform: "macos"}, "OK", "HANG", "OK", "HANG", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "P5"}, "OK", "OK", "LOST", "LOST", "LOST", "OK"),
			suitekit.Row(cell.Spec{Scenario: "P6"}, "OK", "HANG", "HANG", "HANG", "HANG", "OK")),
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
