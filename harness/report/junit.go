package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"

	"logjam/verdict"
)

// JUnit renders the matrix as JUnit XML: a testsuite per family, a
// testcase per cell and repeat, failing with the cell's evidence when it
// did not observe the expected verdict.
func JUnit(run Run, fams []Family) ([]byte, error) {
	suites := junitTestSuites{}
	for _, f := range fams {
		s := junitTestSuite{
			Name:      "logjam " + f.Name,
			Package:   "logjam/suites/" + f.Name,
			Timestamp: run.Started.UTC().Format("2006-01-02T15:04:05"),
			Properties: junitProperties{Properties: []junitProperty{
				{Name: "profile", Value: run.Profile}, {Name: "mode", Value: run.Mode},
				{Name: "seed", Value: fmt.Sprint(run.Seed)}, {Name: "shards", Value: strings.Join(run.Shards, " ")},
			}},
		}
		for _, r := range f.Rows {
			for i, c := range r.Runs {
				name := c.Name
				if len(r.Runs) > 1 {
					name = fmt.Sprintf("%s (repeat %d)", c.Name, repeatOf(c, i))
				}
				tc := junitTestCase{
					Name: name, Classname: "logjam." + f.Name, Status: "passed", Time: float64(c.Ms) / 1000,
				}
				if rt := c.RealText(); rt != "" {
					tc.SystemOut = rt
				}
				switch {
				case c.AsExpected():
				case c.Observed == verdict.NotRun:
					tc.Status = "skipped"
					tc.Skipped = &junitSkipped{Message: "not run: the run was interrupted before this cell started"}
					s.Skipped++
				case c.Failure != "" && (c.VerdictMatches() || c.Observed == SpecFail):
					// The verdict matched (or there is none: a spec outside
					// any cell) but a check of the spec failed.
					what := "check failed"
					if c.Observed == SpecFail {
						what = "spec failed"
					}
					tc.Status = "failed"
					tc.Failure = &junitProblem{
						Message:     what + ": " + c.FailureLine(),
						Type:        "check",
						Description: evidenceText(c, r),
					}
					s.Failures++
				case c.Observed == verdict.Error || c.Observed == verdict.Interrupted:
					// The cell could not judge (a broken scenario promise, a
					// run cut short): a JUnit error, not a failure.
					tc.Status = "errored"
					tc.Error = &junitProblem{
						Message:     fmt.Sprintf("expected %s, observed %s", c.Expected, c.Observed),
						Type:        string(c.Observed),
						Description: evidenceText(c, r),
					}
					s.Errors++
				default:
					tc.Status = "failed"
					tc.Failure = &junitProblem{
						Message:     fmt.Sprintf("expected %s, observed %s", c.Expected, c.Observed),
						Type:        string(c.Observed),
						Description: evidenceText(c, r),
					}
					s.Failures++
				}
				s.Tests++
				s.Time += tc.Time
				s.TestCases = append(s.TestCases, tc)
			}
		}
		suites.Tests += s.Tests
		suites.Failures += s.Failures
		suites.Errors += s.Errors
		suites.Time += s.Time
		suites.TestSuites = append(suites.TestSuites, s)
	}
	b, err := xml.MarshalIndent(suites, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// evidenceText is what a person needs to judge one failing run: why, the
// cycle, the ledger, where the bundle is, and how to rerun the cell.
func evidenceText(c Cell, r Repeated) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cell %s: expected %s, observed %s\n", c.Name, c.Expected, c.Outcome())
	if c.Entry != "" {
		fmt.Fprintf(&b, "declared at %s\n", c.Entry)
	}
	if c.Failure != "" {
		fmt.Fprintf(&b, "failed check: %s\n", c.Failure)
	}
	if rt := c.RealText(); rt != "" {
		fmt.Fprintf(&b, "%s\n", rt)
	}
	if len(r.Runs) > 1 {
		fmt.Fprintf(&b, "repeats: %s\n", r.Observations())
	}
	if s := c.Evidence.Reason; s != "" {
		fmt.Fprintf(&b, "reason: %s\n", s)
	}
	if s := c.Evidence.Cycle; s != "" {
		fmt.Fprintf(&b, "cycle: %s\n", s)
	}
	if c.Observed != SpecFail {
		j, _ := json.Marshal(c.Evidence.Ledger)
		fmt.Fprintf(&b, "ledger: %s\n", j)
	}
	if c.Bundle != "" {
		fmt.Fprintf(&b, "evidence bundle: %s\n", c.Bundle)
	}
	if cmd := SinkReplay(c); cmd != "" {
		fmt.Fprintf(&b, "replay it: %s\n", cmd)
	}
	if cols := besideColumns(c); len(cols) > 0 {
		var parts []string
		for _, p := range cols {
			parts = append(parts, p+" "+string(c.Beside[p]))
		}
		fmt.Fprintf(&b, "the built-in policies here (the model's cells): %s\n", strings.Join(parts, ", "))
	}
	if cmd := RerunOf(c); cmd != "" {
		fmt.Fprintf(&b, "rerun this cell: %s\n", cmd)
	} else if c.Rerun != "" {
		b.WriteString("rerun this cell: (the recorded command is not one logjam writes; not shown)\n")
	}
	return b.String()
}
