package search

import (
	"fmt"
	"io"
	"logjam/scenario/schedule"
	"slices"
	"sort"
	"strings"
)

// PrintFailures prints every failure (seed, class, the command that reruns
// it), how many causes are findings (IsFinding) and how many the ground
// truth, then for each cause the runs that showed it, its first failure's
// schedule in words (found:) and that failure shrunk (shrunk:, in words,
// with the faults and lines before and after), and the command that reruns
// it. With verbose, also the shrink's steps and the schedules themselves:
// each replay command labelled (the found and the shrunk schedule, as
// base64), the shrunk one as JSON, as a Ginkgo Entry for suites/random and
// as a simrt command line with its GO_FAILPOINTS. A cause whose replay did
// not show it again is FLAKY (returned), not shrunk. What it prints
// depends on the verdicts alone, never on which child finished first.
func PrintFailures(w io.Writer, results []Result, findings []*Finding, f schedule.Filter, budget int, verbose bool) (flaky []Flaky) {
	any := false
	for _, res := range results {
		if !res.Failed() {
			continue
		}
		if !any {
			fmt.Fprintf(w, "\nfailures (rerun one: %s)\n", SeedCommand(res.Seed, f))
			any = true
		}
		fmt.Fprintf(w, "  seed %-6d %-36s faults %2d\n", res.Seed, res.Class, res.Schedule.Faults())
	}
	findings = slices.Clone(findings)
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i].Cause, findings[j].Cause
		if ra, rb := policyRank(a), policyRank(b); ra != rb {
			return ra < rb
		}
		return a < b
	})
	if any {
		bugs := 0
		for _, d := range findings {
			if IsFinding(d.First.Schedule) {
				bugs++
			}
		}
		fmt.Fprintf(w, "\n%s: %s (%s failing: a bug), %d ground truth (an older policy failing as documented)\n",
			schedule.Plural(len(findings), "cause"), schedule.Plural(bugs, "finding"), strings.Join(findingColumns, " or "), len(findings)-bugs)
		if !verbose {
			fmt.Fprintln(w, "(-v adds each cause's shrink steps, its replay commands, its shrunk schedule as JSON, a Ginkgo Entry and a simrt line)")
		}
	}
	for _, d := range findings {
		res := d.First
		what := ""
		if IsFinding(res.Schedule) {
			what = "  [a finding: a bug]"
		}
		fmt.Fprintf(w, "\n%s%s\n", d.Cause, what)
		fmt.Fprintf(w, "  runs:     %d (%s), first seed %d\n", d.Runs, strings.Join(d.Classes, "; "), res.Seed)
		fmt.Fprintf(w, "  found:    %s (%s, %s)\n", Describe(res.Schedule), schedule.Plural(res.Schedule.Faults(), "fault"), schedule.Plural(res.Schedule.Lines(), "line"))
		rerun := func() {
			fmt.Fprintf(w, "  rerun:    %s\n", SeedCommand(res.Seed, f))
			if verbose {
				fmt.Fprintf(w, "  replay found:  %s\n", ReplayCommand(res.Schedule))
			}
		}
		if budget == 0 {
			rerun()
			continue
		}
		switch {
		case d.Err != nil:
			fmt.Fprintf(w, "  shrink:   %v\n", d.Err)
			rerun()
			continue
		case d.Replayed != d.Cause:
			fl := Flaky{Seed: res.Seed, Failure: d.Cause, Got: []string{orPass(d.Replayed)}, Reason: res.Reason, Threads: res.Threads}
			flaky = append(flaky, fl)
			fmt.Fprintf(w, "  %s: not shrunk\n", fl)
			rerun()
			continue
		}
		s := d.Shrunk.Schedule
		how := "1-minimal"
		if !d.Shrunk.Minimal {
			how = "budget spent, not 1-minimal"
		}
		runs := fmt.Sprintf("%d child runs", d.Shrunk.Runs)
		if d.Shrunk.Weight != d.Shrunk.Runs {
			runs += fmt.Sprintf(" weighing %d", d.Shrunk.Weight) // slow forwarder reads
		}
		fmt.Fprintf(w, "  shrunk:   %s (faults %d -> %d, lines %d -> %d; %s, %s)\n", Describe(s), res.Schedule.Faults(), s.Faults(), res.Schedule.Lines(), s.Lines(), runs, how)
		rerun()
		if !verbose {
			continue
		}
		if len(d.Shrunk.Steps) > 0 {
			fmt.Fprintf(w, "  steps:    %s\n", strings.Join(d.Shrunk.Steps, ", "))
		}
		fmt.Fprintf(w, "  replay shrunk: %s\n", ReplayCommand(s))
		fmt.Fprintf(w, "  schedule: %s\n", s.JSON())
		fmt.Fprintf(w, "  entry:    %s\n", GinkgoEntry(fmt.Sprintf("seed %d: %s", res.Seed, res.Class), s, res.Verdict))
		fmt.Fprintf(w, "  simrt:    %s\n", SimrtCommand(s))
	}
	return flaky
}

// findingColumns are the columns whose failure is a finding: logjam's
// policy and the lazy-init variant that fixes it. Every other column is
// an older design whose failures the matrix documents (the ground truth).
var findingColumns = []string{"logjam", "fixed"}

// IsFinding reports whether a failure of s is a finding, a bug in logjam
// (Command then exits 1), rather than the ground truth.
func IsFinding(s schedule.Schedule) bool { return slices.Contains(findingColumns, s.Column()) }

func orPass(cause string) string {
	if cause == "" {
		return "OK"
	}
	return cause
}
