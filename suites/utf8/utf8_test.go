package utf8_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/cell"
	"logjam/suites/suitekit"
)

var _ = Describe("Invalid UTF-8 from the runtime", func() {
	DescribeTable("is escaped, in log lines and exception text, and the call raises RuntimeError",
		func(ctx SpecContext, spec cell.Spec, expected string) {
			out := suitekit.Check(ctx, spec, expected)
			if expected == "BADESC" {
				By("showing the offending bytes and the exception type raised")
				Expect(out.Ledger.Detail).To(MatchRegexp(`raised (UnicodeDecodeError: 'utf-8' codec can't decode byte(s)? 0x[0-9a-f]{2}|\w+)`))
			}
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Scenario: "U1"}, "BADESC", "BADESC", "BADESC", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "U2"}, "BADESC", "BADESC", "BADESC", "BADESC", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "U3"}, "BADESC", "BADESC", "BADESC", "OK", "OK", "OK")),
	)
})
