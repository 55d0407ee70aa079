package utf8_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/harness/cell"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

var _ = Describe("Invalid UTF-8 from the runtime", func() {
	DescribeTable("is escaped, in log lines and exception text, and the call raises RuntimeError",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			// U1 under pystderr: CRASH, not BADESC; the model was wrong: pythonbuf's strict decode of the
			// log line raises, and it throws out of a noexcept destructor (FINDINGS.md, "Calibrated").
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "U1"}}, namesTheBytes, verdict.Crash, verdict.BadEsc, verdict.BadEsc, verdict.OK, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "U2"}}, namesTheBytes, verdict.BadEsc, verdict.BadEsc, verdict.BadEsc, verdict.BadEsc, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "U3"}}, namesTheBytes, verdict.BadEsc, verdict.BadEsc, verdict.BadEsc, verdict.OK, verdict.OK, verdict.OK),
			// Python 3.10: PyErr_SetString with invalid UTF-8 raises RuntimeError() with the message silently
			// dropped, so pystderr, fd2 and buffered raise no UnicodeDecodeError there; U1 under fd2 then
			// shows its next verdict, MISROUTED. adaptive decodes for itself: BADESC on every version.
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "U1", Python: "3.10"}}, dropsTheMessage, verdict.Crash, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "U2", Python: "3.10"}}, dropsTheMessage, verdict.OK, verdict.OK, verdict.OK, verdict.BadEsc, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "U3", Python: "3.10"}}, dropsTheMessage, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK)),
	)
})

// dropsTheMessage: on 3.10 the policies that raise through PyErr_SetString
// raise a RuntimeError with no message; the others keep it.
func dropsTheMessage(out *cell.Outcome) {
	switch out.Policy {
	case "pystderr", "fd2", "buffered":
		if out.Observed != verdict.Crash {
			By("raising RuntimeError with the message dropped")
			Expect(out.Ledger.Exceptions).To(ContainElement(MatchRegexp(`^MainThread: RuntimeError: $`)))
		}
	default:
		namesTheBytes(out)
	}
}

// namesTheBytes: a BADESC shows the offending bytes and the exception type raised.
func namesTheBytes(out *cell.Outcome) {
	if out.Observed == verdict.BadEsc {
		By("showing the offending bytes and the exception type raised")
		Expect(out.Ledger.Detail).To(MatchRegexp(`raised (UnicodeDecodeError: 'utf-8' codec can't decode byte(s)? 0x[0-9a-f]{2}|\w+)`))
	}
	if out.Observed == verdict.BadEsc && out.Scenario == "U2" && out.Policy == "adaptive" {
		By("decoding the whole text: the cut character meets the separator")
		Expect(out.Ledger.Detail).To(ContainSubstring("invalid continuation byte"))
	}
}
