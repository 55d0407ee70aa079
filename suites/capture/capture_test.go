package capture_test

import (
	. "github.com/onsi/ginkgo/v2"

	"logjam/harness/cell"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

var _ = Describe("A replaced sys.stderr", func() {
	DescribeTable("receives every line a call logs, or fd 2 does after the stream refused it",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "C1"}}, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			// C2 under pystderr: CRASH, not LOST; the model was wrong: pythonbuf does not swallow the
			// OSError, it throws out of a noexcept destructor: std::terminate (FINDINGS.md, "Calibrated").
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "C2"}}, verdict.Crash, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "C3"}}, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			// C4: one failed write must not cost the lines after it; pystderr still dies on it (as C2).
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "C4"}}, verdict.Crash, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK)),
	)
})
