package utf8_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/cell"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

var _ = Describe("Invalid UTF-8 from the runtime", func() {
	DescribeTable("is escaped, in log lines and exception text, and the call raises RuntimeError",
		func(ctx SpecContext, spec cell.Spec, expected string, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.RowThen(cell.Spec{Scenario: "U1"}, namesTheBytes, "BADESC", "BADESC", "BADESC", "OK", "OK", "OK"),
			suitekit.RowThen(cell.Spec{Scenario: "U2"}, namesTheBytes, "BADESC", "BADESC", "BADESC", "BADESC", "OK", "OK"),
			suitekit.RowThen(cell.Spec{Scenario: "U3"}, namesTheBytes, "BADESC", "BADESC", "BADESC", "OK", "OK", "OK")),
	)
})

// namesTheBytes: a BADESC shows the offending bytes and the exception type raised.
func namesTheBytes(out *cell.Outcome) {
	if out.Observed == verdict.BadEsc {
		By("showing the offending bytes and the exception type raised")
		Expect(out.Ledger.Detail).To(MatchRegexp(`raised (UnicodeDecodeError: 'utf-8' codec can't decode byte(s)? 0x[0-9a-f]{2}|\w+)`))
	}
}
