package capture_test

import (
	. "github.com/onsi/ginkgo/v2"

	"logjam/cell"
	"logjam/suites/suitekit"
)

func cells(id string, verdicts ...string) []TableEntry {
	var es []TableEntry
	for i, p := range []string{"pystderr", "fd2", "buffered", "adaptive", "merged", "logjam"} {
		es = append(es, suitekit.Cell(cell.Spec{Scenario: id, Policy: p}, verdicts[i]))
	}
	return es
}

var _ = Describe("A replaced sys.stderr", func() {
	DescribeTable("receives every line a call logs, or fd 2 does after the stream refused it",
		func(ctx SpecContext, spec cell.Spec, expected string) {
			suitekit.Check(ctx, spec, expected)
		},
		append(append(cells("C1", "OK", "MISROUTED", "OK", "OK", "OK", "OK"),
			cells("C2", "LOST", "MISROUTED", "OK", "OK", "OK", "OK")...),
			cells("C3", "OK", "MISROUTED", "OK", "OK", "OK", "OK")...),
	)
})
