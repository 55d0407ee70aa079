package fd2errors_test

import (
	. "github.com/onsi/ginkgo/v2"

	"logjam/harness/cell"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

// The verdicts come from the policies' rules (docs/SCENARIOS.md) and
// docs/CONTRACT.md's "A write the kernel refuses": pystderr's sys.stderr.write
// raises (BrokenPipeError, OSError, BlockingIOError) and pythonbuf throws it
// out of a noexcept destructor; fwrite gives up the line a refused write
// carried and goes on, which is no loss for EPIPE, ENOSPC and EIO but is one
// for EAGAIN (no room now); logjam waits for room on EAGAIN.
var _ = Describe("a write(2) on fd 2 the kernel refuses", func() {
	suitekit.LinuxOnly("one-page pipes (F_SETPIPE_SZ)")

	DescribeTable("costs at most the line it refused, never a later one, a hang, a crash or an exception in the caller",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "E1"}}, verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "E2"}}, verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "E3"}}, verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "E4"}}, verdict.Crash, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK),
			// Under python -u sys.stderr writes through to FileIO, whose None (EAGAIN) TextIOWrapper
			// ignores: pystderr's lines are silently gone (LOST), where an error for good still raises.
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "E3", Buffering: "unbuffered"}}, verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "E4", Buffering: "unbuffered"}}, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK)),
	)
})
