package search

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"logjam/internal/axes"
	"logjam/scenario/schedule"
	"logjam/verdict"
)

// columns are the table's verdicts: OK, then the rest in precedence.
func columns() []verdict.Verdict {
	cols := []verdict.Verdict{verdict.OK}
	for _, v := range verdict.Precedence {
		if v != verdict.OK && v != verdict.Completed {
			cols = append(cols, v)
		}
	}
	return cols
}

// PrintTable prints the runs per policy and verdict, then every failure
// with its seed and replay command. It prints nothing that depends on the
// machine's timing, so the same seed prints the same table.
func PrintTable(w io.Writer, results []Result) {
	byPolicy := map[string]map[verdict.Verdict]int{}
	var policies []string
	used := map[verdict.Verdict]bool{verdict.OK: true}
	for _, r := range results {
		p := r.Schedule.Column()
		if r.Schedule.Lazy != nil {
			p = "lazyinit/" + p
		}
		if byPolicy[p] == nil {
			byPolicy[p] = map[verdict.Verdict]int{}
			policies = append(policies, p)
		}
		byPolicy[p][r.Verdict]++
		used[r.Verdict] = true
	}
	sort.Slice(policies, func(i, j int) bool { return policyRank(policies[i]) < policyRank(policies[j]) })
	var cols []verdict.Verdict
	for _, v := range columns() {
		if used[v] {
			cols = append(cols, v)
		}
	}
	fails := 0
	for _, r := range results {
		if r.Failed() {
			fails++
		}
	}
	fmt.Fprintf(w, "%d runs, %d failures\n\n", len(results), fails)
	fmt.Fprintf(w, "%-18s %6s", "policy", "runs")
	for _, c := range cols {
		fmt.Fprintf(w, " %*s", max(5, len(c)), string(c))
	}
	fmt.Fprintln(w)
	for _, p := range policies {
		total := 0
		for _, n := range byPolicy[p] {
			total += n
		}
		fmt.Fprintf(w, "%-18s %6d", p, total)
		for _, c := range cols {
			fmt.Fprintf(w, " %*d", max(5, len(c)), byPolicy[p][c])
		}
		fmt.Fprintln(w)
	}
	classes := map[string][]Result{}
	var names []string
	for _, r := range results {
		if !r.Failed() {
			continue
		}
		if classes[r.Class] == nil {
			names = append(names, r.Class)
		}
		classes[r.Class] = append(classes[r.Class], r)
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := policyRank(names[i]), policyRank(names[j]); a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	if len(names) > 0 {
		fmt.Fprintf(w, "\nfailures by class (seeds)\n")
	}
	for _, n := range names {
		var seeds []string
		for _, r := range classes[n] {
			seeds = append(seeds, fmt.Sprint(r.Seed))
		}
		fmt.Fprintf(w, "  %-40s %4d  seeds: %s\n", n, len(classes[n]), strings.Join(seeds, " "))
	}
}

// policyRank orders rows and classes as the matrix's columns.
func policyRank(s string) int {
	order := axes.Columns()
	for i, p := range order {
		if i >= len(axes.Policies) {
			p = "lazyinit/" + p
		}
		if s == p || strings.HasPrefix(s, p+" ") {
			return i
		}
	}
	return len(order)
}

// ReplayCommand reruns exactly one schedule with its parent.
func ReplayCommand(s schedule.Schedule) string {
	return "./logjam chaos -replay " + s.Encode()
}

// SeedCommand reruns run seed alone (the same schedule while the generator
// is unchanged).
func SeedCommand(seed uint64, f schedule.Filter) string {
	c := fmt.Sprintf("./logjam chaos -random 1 -seed %d", seed)
	if f.Kind != "" {
		c += " -kind " + f.Kind
	}
	if len(f.Policies) > 0 {
		c += " -policy " + strings.Join(f.Policies, ",")
	}
	return c
}

// SimrtCommand runs the child alone by hand (without the parent's pipe,
// pauses and SIGINTs); its -deadline ends it where no terminal is to
// press Ctrl-\ (a CI log pasted into a script), and it writes no telemetry.
func SimrtCommand(s schedule.Schedule) string {
	return fmt.Sprintf("GO_FAILPOINTS='%s' ./logjam simrt -deadline 20s -scenario R -schedule %s", s.Failpoints().Env(), s.Encode())
}

// GinkgoEntry is the shrunk failure as an Entry for suites/random's table
// of findings: the schedule and the verdict observed.
func GinkgoEntry(name string, s schedule.Schedule, v verdict.Verdict) string {
	return fmt.Sprintf("Entry(%q, %q, %q),", name, string(s.JSON()), string(v))
}
