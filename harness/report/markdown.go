package report

import (
	"bytes"
	"fmt"
	"strings"

	"logjam/internal/textout"
)

// Markdown renders the matrix for a job summary or a PR comment: the run,
// a line per family, the cells that did not come out as expected with
// their rerun commands, the legend (Legend) and each family's grid folded
// away. Every string from the run or a cell may be someone else's: each
// is a code span (textout.MarkdownCode) or escaped text
// (textout.MarkdownCell), so that no newline ends a table and no tag, link
// or heading gets in; a rerun command is built by RerunOf.
func Markdown(run Run, fams []Family) []byte {
	var b bytes.Buffer
	t := Count(fams)
	all := cellsOf(fams)
	if sink := sinkOf(all); sink != nil {
		fmt.Fprintf(&b, "## logjam calibrate -sink %s: %d cells, %d OK, %d not, %d flaky\n\n", mdCode(sink.File), t.Cells, t.AsExpected, t.Not, t.Flaky)
		fmt.Fprintf(&b, "Your sink %s (SHA-256 %s) played on real CPython %s, beside the built-in policies' model cells; %s",
			mdCode(sink.File), mdCode(sink.SHA256), mdCell(strings.Join(pythonsOf(all), ", ")), mdCell(run.Go))
	} else {
		fmt.Fprintf(&b, "## logjam chaos: %d cells, %d as expected, %d not, %d flaky\n\n", t.Cells, t.AsExpected, t.Not, t.Flaky)
		fmt.Fprintf(&b, "Profile %s (%s mode, deadline %s, %d repeat(s)), seed %d, shards %s; %s, ginkgo %s",
			mdCode(run.Profile), mdCell(run.Mode), mdCell(run.Deadline), run.Repeat, run.Seed, mdCell(strings.Join(run.Shards, " ")), mdCell(run.Go), mdCell(run.Ginkgo))
	}
	if run.Commit != "" {
		fmt.Fprintf(&b, ", logjam %s", mdCell(run.Commit))
	}
	fmt.Fprintf(&b, "; started %s, %.1f s wall.\n\n", run.Started.UTC().Format("2006-01-02 15:04 MST"), run.Seconds)
	b.WriteString("| family | cells | as expected | not | flaky | cell seconds |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, f := range fams {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.1f |\n", mdCell(f.Name), len(f.Rows), f.AsExpected, f.Not(), f.Flaky, f.Seconds)
	}
	if t.Not > 0 {
		// A sink's cell has no other check: its reason is what says why.
		head := "failed check"
		if sinkOf(all) != nil {
			head = "reason"
		}
		fmt.Fprintf(&b, "\n### Not as expected\n\n| cell | expected | observed | %s | rerun |\n| --- | --- | --- | --- | --- |\n", head)
		for _, f := range fams {
			for _, r := range f.Rows {
				if !r.AsExpected() {
					check, rerun := "", ""
					for _, c := range r.Unexpected() {
						if c.Failure != "" {
							check = mdCode(c.FailureLine())
							break
						}
						if head == "reason" && c.Evidence.Reason != "" {
							check = mdCell(clipLine(c.Evidence.Reason))
							break
						}
					}
					if cmd := RerunOf(r.Cell); cmd != "" {
						rerun = mdCode(cmd)
					} else if r.Rerun != "" {
						rerun = "(not one logjam writes: not shown)"
					}
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCode(r.Family+": "+r.Name), mdCell(string(r.Expected)), mdCell(r.Observations()), check, rerun)
				}
			}
		}
	}
	b.WriteString("\n### Reading the matrix\n\n")
	for _, l := range LegendOf(all) {
		fmt.Fprintf(&b, "- %s\n", mdCell(l))
	}
	b.WriteString("\n")
	for _, f := range fams {
		g := layout(f)
		cols := make([]string, len(g.Cols))
		for i, c := range g.Cols {
			cols[i] = mdCell(c)
		}
		fmt.Fprintf(&b, "<details><summary>%s matrix</summary>\n\n| id | %s |\n|%s\n", mdCell(f.Name), strings.Join(cols, " | "), strings.Repeat(" --- |", len(g.Cols)+1))
		for _, label := range g.Rows {
			fmt.Fprintf(&b, "| %s |", mdCell(label))
			for _, col := range g.Cols {
				r, ok := g.At[[2]string{label, col}]
				v, beside := g.Beside[[2]string{label, col}]
				switch {
				case !ok && beside:
					fmt.Fprintf(&b, " %s |", mdCell(string(v)))
				case !ok:
					b.WriteString(" - |")
				case r.AsExpected():
					fmt.Fprintf(&b, " %s%s |", mdCell(string(r.Verdict())), mdReal(r.Cell))
				case r.Verdict() == r.Expected || r.Verdict() == SpecFail:
					fmt.Fprintf(&b, " **%s, check failed**%s |", mdCell(string(r.Verdict())), mdReal(r.Cell))
				default:
					fmt.Fprintf(&b, " **%s** (expected %s)%s |", mdCell(string(r.Verdict())), mdCell(string(r.Expected)), mdReal(r.Cell))
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
	if rt := c.RealText(); rt != "" && c.Family != "sink" { // a sink's verdict is the real one
		return " (" + mdCell(rt) + ")"
	}
	return ""
}

// mdCell is a foreign string as text in a table cell.
func mdCell(s string) string { return textout.MarkdownCell(s) }

// mdCode is a foreign string as a code span in a table cell.
func mdCode(s string) string { return textout.MarkdownCode(s) }
