package capture_test

import (
	. "github.com/onsi/ginkgo/v2"

	"logjam/harness/cell"
	"logjam/suites/suitekit"
)

var _ = Describe("A replaced sys.stderr", func() {
	DescribeTable("receives every line a call logs, or fd 2 does after the stream refused it",
		func(ctx SpecContext, spec cell.Spec, expected string, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Scenario: "C1"}, "OK", "MISROUTED", "OK", "OK", "OK", "OK"),
			// C2 under pystderr: CRASH, not LOST; the model was wrong: pythonbuf does not swallow the
			// OSError, it throws out of a noexcept destructor: std::terminate (FINDINGS.md, "Calibrated").
			suitekit.Row(cell.Spec{Scenario: "C2"}, "CRASH", "MISROUTED", "OK", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "C3"}, "OK", "MISROUTED", "OK", "OK", "OK", "OK")),
	)
})
