package signals_test

import (
	. "github.com/onsi/ginkgo/v2"

	"logjam/cell"
	"logjam/suites/suitekit"
)

var _ = Describe("A Ctrl-C during a binding call", func() {
	suitekit.LinuxOnly("real SIGINTs to the child, a child started with SIGINT ignored, and I2's one-page pipe (F_SETPIPE_SZ, POLLOUT per page slot)")

	DescribeTable("reaches the caller once, its handler run once, and loses no line",
		func(ctx SpecContext, spec cell.Spec, expected string) {
			suitekit.Check(ctx, spec, expected)
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Scenario: "I1"}, "OK", "OK", "OK", "OK", "OK", "OK"),
			// Finding: SCENARIOS.md predicts OK for I2 under adaptive and merged;
			// the run shows DOUBLEINT, and the run is right. Under their rules no
			// direct write blocks (a one-page pipe the parent stopped reading
			// fails the 100 ms room check, so the call keeps its lines); the write
			// that blocks is the flush at the outermost exit, a Python write on
			// the main thread. The SIGINT interrupts it (FileIO's EINTR path runs
			// default_int_handler: run 1), the policy falls back to fd 2 and
			// replays the interrupt with PyErr_SetInterrupt, and the eval loop
			// runs the handler again (run 2): one Ctrl-C, two handler runs, the
			// third review round's claim. logjam re-raises instead: one run.
			suitekit.Row(cell.Spec{Scenario: "I2"}, "LOST", "OK", "LOST", "DOUBLEINT", "DOUBLEINT", "OK"),
			// I3-I6 under fd2 are MISROUTED as predicted because the ledger counts
			// only the Ctrl-Cs a run delivered: fd2 never calls the stream's write,
			// so no KeyboardInterrupt is raised and, in I6, no SIGINT is sent.
			suitekit.Row(cell.Spec{Scenario: "I3"}, "LOST", "MISROUTED", "LOST", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "I4"}, "LOST", "MISROUTED", "LOST", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "I5"}, "LOST", "MISROUTED", "LOST", "LOSTINT", "LOSTINT", "OK"),
			suitekit.Row(cell.Spec{Scenario: "I6"}, "LOST", "MISROUTED", "LOST", "DOUBLEINT", "DOUBLEINT", "OK")),
	)
})
