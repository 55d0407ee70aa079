package deadlock_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/cell"
	"logjam/suites/suitekit"
)

var _ = Describe("A backend that logs while holding its own lock", func() {
	DescribeTable("never deadlocks two threads through the GIL",
		func(ctx SpecContext, spec cell.Spec, expected string) {
			out := suitekit.Check(ctx, spec, expected)
			if expected == "HANG" {
				By("naming the cycle: A holds the backend lock and waits for the GIL; B holds the GIL and waits for the backend lock")
				Expect(out.Cycle).To(And(
					ContainSubstring("thread A holds xnnpack workspace lock and waits for the GIL (held by B)"),
					ContainSubstring("thread B holds the GIL and waits for xnnpack workspace lock (held by A)")))
			}
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Scenario: "D1"}, "HANG", "OK", "OK", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "D2"}, "HANG", "MISROUTED", "OK", "OK", "OK", "OK")),
	)
})
