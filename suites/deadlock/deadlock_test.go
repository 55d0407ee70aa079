package deadlock_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/harness/cell"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

var _ = Describe("A backend that logs while holding its own lock", func() {
	DescribeTable("never deadlocks two threads through the GIL",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "D1"}}, namesTheCycle, verdict.Hang, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "D2"}}, namesTheCycle, verdict.Hang, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK)),
	)
	DescribeTable("never deadlocks a call that waits for its own threads while they log",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "D3"}}, namesTheJoinCycle, verdict.Hang, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "D4"}}, namesTheJoinCycle, verdict.Hang, verdict.Hang, verdict.Hang, verdict.Hang, verdict.Hang, verdict.OK)),
	)
	DescribeTable("never leaves a forked child waiting for a lock only a thread of the parent could release",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			// D5: the older sinks own no lock a fork could leave held; logjam's
			// at-fork rule is what keeps its cell OK (the mutant
			// sim-logjam-fork-lock-not-handled makes it HANG).
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "D5"}}, namesTheForkWait, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK)),
	)
})

// namesTheForkWait: the child's thread waits for a lock of the sink's
// own that the fork left held by a thread that is not in the child.
func namesTheForkWait(out *cell.Outcome) {
	if out.Observed == verdict.Hang {
		By("naming the wait: the child's thread waits for the child's copy of the sink's lock, held by T1, which is not in the child")
		Expect(out.Cycle).To(MatchRegexp(`thread MainThread \(child\) holds [^;]* and waits for [^;]*\(the child's copy\) \(held by T1 \(the parent's, not in the child\)\); thread T1 \(the parent's, not in the child\) has ended without releasing it`))
	}
}

// namesTheJoinCycle: the main thread holds the GIL and waits for the end of
// a pool thread, which waits for the GIL itself or for room on fd 2 that
// only the forwarder, waiting for the GIL, can make.
func namesTheJoinCycle(out *cell.Outcome) {
	if out.Observed == verdict.Hang {
		By("naming the cycle: MainThread holds the GIL and waits for the end of a pool thread, which waits for the GIL or for the forwarder")
		Expect(out.Cycle).To(And(
			MatchRegexp(`thread MainThread holds the GIL and waits for the end of thread W[01]`),
			MatchRegexp(`thread W[01] (holds [^;]*)?(and )?waits for (the GIL|room on fd 2)`)))
	}
}

// namesTheCycle: A holds the backend lock and waits for the GIL; B holds the
// GIL and waits for the backend lock.
func namesTheCycle(out *cell.Outcome) {
	if out.Observed == verdict.Hang {
		By("naming the cycle: A holds the backend lock and waits for the GIL; B holds the GIL and waits for the backend lock")
		Expect(out.Cycle).To(And(
			// A's write through the original sys.stderr (pystderr in D1) also holds its BufferedWriter's lock.
			MatchRegexp(`thread A holds xnnpack workspace lock (and the lock of sys\.stderr's BufferedWriter )?and waits for the GIL \(held by B\)`),
			ContainSubstring("thread B holds the GIL and waits for xnnpack workspace lock (held by A)")))
	}
}
