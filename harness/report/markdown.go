package report

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown renders the matrix for a job summary or a PR comment: the run,
// a line per family, the cells that did not come out as expected with
// their rerun commands, and each family's grid folded away.
func Markdown(run Run, fams []Family) []byte {
	var b bytes.Buffer
	t := Count(fams)
	fmt.Fprintf(&b, "## logjam chaos: %d cells, %d as expected, %d not, %d flaky\n\n", t.Cells, t.AsExpected, t.Not, t.Flaky)
	fmt.Fprintf(&b, "Profile `%s` (%s mode, deadline %s, %d repeat(s)), seed %d, shards %s; %s, ginkgo %s",
		run.Profile, run.Mode, run.Deadline, run.Repeat, run.Seed, strings.Join(run.Shards, " "), run.Go, run.Ginkgo)
	if run.Commit != "" {
		fmt.Fprintf(&b, ", logjam %s", run.Commit)
	}
	fmt.Fprintf(&b, "; started %s, %.1f s wall.\n\n", run.Started.UTC().Format("2006-01-02 15:04 MST"), run.Seconds)
	b.WriteString("| family | cells | as expected | not | flaky | cell seconds |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, f := range fams {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.1f |\n", f.Name, len(f.Rows), f.AsExpected, f.Not(), f.Flaky, f.Seconds)
	}
	if t.Not > 0 {
		b.WriteString("\n### Not as expected\n\n| cell | expected | observed | failed check | rerun |\n| --- | --- | --- | --- | --- |\n")
		for _, f := range fams {
			for _, r := range f.Rows {
				if !r.AsExpected() {
					check, rerun := "", ""
					for _, c := range r.Unexpected() {
						if c.Failure != "" {
							check = mdCode(c.FailureLine())
							break
						}
					}
					if r.Rerun != "" {
						rerun = mdCode(r.Rerun)
					}
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCode(r.Family+": "+r.Name), r.Expected, mdCell(r.Observations()), check, rerun)
				}
			}
		}
	}
	b.WriteString("\n")
	for _, f := range fams {
		g := layout(f)
		fmt.Fprintf(&b, "<details><summary>%s matrix</summary>\n\n| id | %s |\n|%s\n", f.Name, strings.Join(g.Cols, " | "), strings.Repeat(" --- |", len(g.Cols)+1))
		for _, label := range g.Rows {
			fmt.Fprintf(&b, "| %s |", label)
			for _, col := range g.Cols {
				r, ok := g.At[[2]string{label, col}]
				switch {
				case !ok:
					b.WriteString(" - |")
				case r.AsExpected():
					fmt.Fprintf(&b, " %s%s |", r.Verdict(), mdReal(r.Cell))
				case r.Verdict() == r.Expected || r.Verdict() == SpecFail:
					fmt.Fprintf(&b, " **%s, check failed**%s |", r.Verdict(), mdReal(r.Cell))
				default:
					fmt.Fprintf(&b, " **%s** (expected %s)%s |", r.Verdict(), r.Expected, mdReal(r.Cell))
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n</details>\n")
	}
	return b.Bytes()
}

// mdReal is the real column after a verdict ("" without real runs).
func mdReal(c Cell) string {
	if rt := c.RealText(); rt != "" {
		return " (" + mdCell(rt) + ")"
	}
	return ""
}

// mdCell escapes what would end a table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// mdCode puts s in a code span that survives a table: backticks inside
// need a longer fence, and pipes are escaped.
func mdCode(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + mdCell(s) + " " + fence
}
