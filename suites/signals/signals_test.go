package signals_test

import (
	. "github.com/onsi/ginkgo/v2"

	"logjam/cell"
	"logjam/suites/suitekit"
)

var _ = Describe("A Ctrl-C during a binding call", func() {
	suitekit.LinuxOnly("real SIGINTs to the child, a child started with SIGINT ignored, and I2's one-page pipe (F_SETPIPE_SZ, POLLOUT per page slot)")

	DescribeTable("reaches the caller once, its handler run once, and loses no line",
		func(ctx SpecContext, spec cell.Spec, expected string, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Scenario: "I1"}, "OK", "OK", "OK", "OK", "OK", "OK"),
			// I2 under adaptive and merged: DOUBLEINT, not SCENARIOS.md's OK (FINDINGS.md, "I2").
			suitekit.Row(cell.Spec{Scenario: "I2"}, "LOST", "OK", "LOST", "DOUBLEINT", "DOUBLEINT", "OK"),
			// I3-I6 under fd2: MISROUTED, not LOSTINT (FINDINGS.md, "I3-I6").
			suitekit.Row(cell.Spec{Scenario: "I3"}, "LOST", "MISROUTED", "LOST", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "I4"}, "LOST", "MISROUTED", "LOST", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "I5"}, "LOST", "MISROUTED", "LOST", "LOSTINT", "LOSTINT", "OK"),
			suitekit.Row(cell.Spec{Scenario: "I6"}, "LOST", "MISROUTED", "LOST", "DOUBLEINT", "DOUBLEINT", "OK")),
	)
})
