package signals_test

import (
	. "github.com/onsi/ginkgo/v2"

	"logjam/harness/cell"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

var _ = Describe("A Ctrl-C during a binding call", func() {
	suitekit.LinuxOnly("real SIGINTs to the child, a child started with SIGINT ignored, and I2's one-page pipe (F_SETPIPE_SZ, POLLOUT per page slot)")

	DescribeTable("reaches the caller once, its handler run once, and loses no line",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			// I1 under pystderr: CRASH, not OK; the model was wrong: the BufferedWriter's flush runs the
			// pending handler after its write (PyErr_CheckSignals), the write raises KeyboardInterrupt,
			// and pythonbuf throws out of a noexcept destructor (FINDINGS.md, "Calibrated").
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I1"}}, verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			// I2 under adaptive and merged: DOUBLEINT, not docs/SCENARIOS.md's OK (FINDINGS.md, "I2").
			// I2 under pystderr: CRASH (the interrupted write raises into pythonbuf), and under fd2: LOST
			// (fwrite gives up on EINTR); the model was wrong on both (FINDINGS.md, "Calibrated").
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I2"}}, verdict.Crash, verdict.Lost, verdict.Lost, verdict.DoubleInt, verdict.DoubleInt, verdict.OK),
			// I3-I6 under fd2: MISROUTED, not LOSTINT (FINDINGS.md, "I3-I6"). Under pystderr: CRASH, not
			// LOST; the model was wrong: the stream's exception makes pythonbuf throw (FINDINGS.md, "Calibrated").
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I3"}}, verdict.Crash, verdict.Misrouted, verdict.Lost, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I4"}}, verdict.Crash, verdict.Misrouted, verdict.Lost, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I5"}}, verdict.Crash, verdict.Misrouted, verdict.Lost, verdict.LostInt, verdict.LostInt, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I6"}}, verdict.Crash, verdict.Misrouted, verdict.Lost, verdict.DoubleInt, verdict.DoubleInt, verdict.OK),
			// python -u: a raw FileIO runs no handler after a write that succeeded (I1 under pystderr is OK),
			// and TextIOWrapper ignores the short count of an interrupted write: the flush of adaptive and
			// merged returns success with lines missing (LOST); logjam counts what the raw writes took.
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I1", Buffering: "unbuffered"}}, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I2", Buffering: "unbuffered"}}, verdict.Crash, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK),
			// A second Ctrl-C during the fallback: fwrite gives up on EINTR, so fd2, adaptive and merged lose
			// the line in flight (buffered has lost the flush's rest already); logjam's own write loop retries
			// it, raises the first after the call and leaves the second to the eval loop.
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I7"}}, verdict.Crash, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I7", Buffering: "unbuffered"}}, verdict.Crash, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I8"}}, verdict.Crash, verdict.Lost, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			// I8 unbuffered under buffered, adaptive and merged: LOST, not docs/SCENARIOS.md's first OK (FINDINGS.md, "I8").
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "I8", Buffering: "unbuffered"}}, verdict.OK, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK)),
	)
})
