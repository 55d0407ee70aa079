package pipes_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/cell"
	"logjam/ledger"
	"logjam/suites/suitekit"
)

var _ = Describe("fd 2 as a pipe or a terminal", func() {
	suitekit.LinuxOnly("one-page pipes (F_SETPIPE_SZ), POLLOUT per page slot, /proc/self/fd and /dev/ptmx")

	DescribeTable("never blocks a GIL holder on a pipe only a GIL waiter drains, and loses no line",
		func(ctx SpecContext, spec cell.Spec, expected string) {
			out := suitekit.Check(ctx, spec, expected)
			if expected == "HANG" && spec.Policy == "fd2" && (spec.Scenario == "P1" || spec.Scenario == "P2") {
				By("naming the cycle: the GIL holder waits for room on the pipe; the forwarder that drains it waits for the GIL")
				Expect(out.Cycle).To(And(
					MatchRegexp(`thread MainThread holds the GIL and .* waits for room on fd 2 \(a pipe\) \(drained by \w+ forwarder\)`),
					MatchRegexp(`thread \w+ forwarder holds nothing and waits for the GIL \(held by MainThread\)`)))
			}
			if spec.Scenario == "P3" && out.Observed == "OK" {
				By("finding fd 2's lines complete and in the order they were logged")
				Expect(ledger.OutOfOrder(out.Transcript, out.FD2)).To(BeEmpty())
			}
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Scenario: "P1"}, "OK", "HANG", "OK", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "P2"}, "OK", "HANG", "OK", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "P3"}, "OK", "OK", "OK", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "P4", Platform: "macos"}, "OK", "HANG", "OK", "HANG", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "P5"}, "OK", "OK", "LOST", "LOST", "LOST", "OK"),
			suitekit.Row(cell.Spec{Scenario: "P6"}, "OK", "HANG", "HANG", "HANG", "HANG", "OK")),
	)
})
