package report

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"logjam/internal/textout"
	"logjam/verdict"
)

// evidenceLines are what a cell not as expected shows under its line:
// the reason, the cycle when one formed, and where its bundle is (each
// clipped, neutralised: a cell may come from someone else's shard).
func evidenceLines(c Cell) string {
	var b strings.Builder
	clip := func(s string) string {
		if len(s) > 400 {
			s = s[:400] + "..."
		}
		return textout.Terminal(s)
	}
	if r := c.Evidence.Reason; r != "" {
		fmt.Fprintf(&b, "\n  reason: %s", clip(r))
	}
	if cy := c.Evidence.Cycle; cy != "" {
		fmt.Fprintf(&b, "\n  cycle: %s", clip(cy))
	}
	if c.Bundle != "" {
		fmt.Fprintf(&b, "\n  evidence: ./logjam replay %s", clip(c.Bundle))
	}
	return b.String()
}

// RenderText prints one table per family, a row per scenario and a column
// per policy (or lazy-init variant); "!" marks an observation that differs
// from the expected verdict (shown after "/"), "+check" a matching verdict
// whose spec failed another check, "!FAIL" a spec that failed outside
// any cell; a NOTRUN cell (an interrupted
// run never started it) is neither. Then a summary, the failed check's first line
// and the rerun command of each unexpected cell. It returns how many cells were unexpected.
//
// Every string in a cell may come from someone else's shard: each field is
// shown with textout.Terminal (no escape sequence or newline is sent), each
// line with textout.CILine (none begins a CI workflow command), and each
// rerun command is built by RerunOf, never copied from the matrix.
func RenderText(w io.Writer, m Matrix) int {
	w = &ciLines{w: w}
	byFamily := map[string][]Cell{}
	var families []string
	for _, c := range m {
		if _, ok := byFamily[c.Family]; !ok {
			families = append(families, c.Family)
		}
		byFamily[c.Family] = append(byFamily[c.Family], c)
	}
	var reruns, failed, entries []string
	notRun := 0
	for _, f := range families {
		cs := byFamily[f]
		var cols, rows []string
		grid := map[[2]string]string{}
		for _, c := range cs {
			col, row := textout.Terminal(c.Column()), textout.Terminal(c.Row())
			if !slices.Contains(cols, col) {
				cols = append(cols, col)
			}
			if !slices.Contains(rows, row) {
				rows = append(rows, row)
			}
			v := textout.Terminal(string(c.Observed))
			if c.Observed == verdict.NotRun {
				notRun++
			} else if !c.AsExpected() {
				switch {
				case c.Observed == SpecFail:
					v = "!" + string(SpecFail)
				case c.VerdictMatches():
					v = "!" + v + "+check"
				default:
					v = "!" + v + "/" + textout.Terminal(string(c.Expected))
				}
				if c.Failure != "" {
					failed = append(failed, fmt.Sprintf("failed: %s: %s: %s", textout.Terminal(c.Family), textout.Terminal(c.Name), textout.Terminal(c.FailureLine())))
				}
				if c.Rerun != "" {
					if r := RerunOf(c); r != "" {
						reruns = append(reruns, textout.Terminal(r))
					} else {
						reruns = append(reruns, fmt.Sprintf("(%s: %s: the recorded command is not one logjam writes; not shown)", textout.Terminal(c.Family), textout.Terminal(c.Name)))
					}
				}
				if c.Entry != "" && !c.VerdictMatches() {
					entries = append(entries, fmt.Sprintf("%s: %s %s: expected %s, observed %s", textout.Terminal(c.Entry), textout.Terminal(c.Family), textout.Terminal(c.Name),
						textout.Terminal(string(c.Expected)), textout.Terminal(string(c.Observed)))+evidenceLines(c))
				}
			}
			if rt := c.RealText(); rt != "" {
				v += " | " + textout.Terminal(rt)
			}
			grid[[2]string{row, col}] = v
		}
		slices.SortStableFunc(cols, func(a, b string) int { return columnRank(a) - columnRank(b) })
		fmt.Fprintf(w, "\n%s (%d cells)\n", textout.Terminal(f), len(cs))
		width := 12
		for _, col := range cols {
			width = max(width, len(col)+2)
		}
		for _, v := range grid {
			width = max(width, len(v)+2)
		}
		idWidth := 12
		for _, r := range rows {
			idWidth = max(idWidth, len(r)+2)
		}
		fmt.Fprintf(w, "%-*s", idWidth, "id")
		for _, col := range cols {
			fmt.Fprintf(w, "%-*s", width, col)
		}
		fmt.Fprintln(w)
		for _, r := range rows {
			fmt.Fprintf(w, "%-*s", idWidth, r)
			for _, col := range cols {
				v := grid[[2]string{r, col}]
				if v == "" {
					v = "-"
				}
				fmt.Fprintf(w, "%-*s", width, v)
			}
			fmt.Fprintln(w)
		}
	}
	bad := 0
	for _, c := range m {
		if c.Observed != verdict.NotRun && !c.AsExpected() {
			bad++
		}
	}
	fmt.Fprintf(w, "\n%d cells, %d as expected, %d not", len(m), len(m)-bad-notRun, bad)
	if notRun > 0 {
		fmt.Fprintf(w, ", %d not run (interrupted first)", notRun)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, verdictCounts(m))
	if bad > 0 {
		fmt.Fprintln(w, "legend: !OBSERVED/EXPECTED a cell whose verdict was not the expected one; !VERDICT+check the verdict as expected, another check of the spec failed; !FAIL a spec that failed outside any cell")
	}
	for _, f := range failed {
		fmt.Fprintln(w, f)
	}
	for _, e := range entries {
		fmt.Fprintln(w, e)
	}
	for _, r := range reruns {
		fmt.Fprintf(w, "rerun: %s\n", r)
	}
	return bad
}

// verdictCounts is one line: how many cells were observed with each
// verdict, in precedence order (verdicts outside it, such as a spec's
// FAIL, last).
func verdictCounts(m Matrix) string {
	n := map[verdict.Verdict]int{}
	for _, c := range m {
		n[c.Observed]++
	}
	order := slices.Clone(verdict.Precedence)
	for _, v := range slices.Sorted(maps.Keys(n)) {
		if !slices.Contains(order, v) {
			order = append(order, v)
		}
	}
	var parts []string
	for _, v := range order {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", textout.Terminal(string(v)), n[v]))
		}
	}
	return "observed: " + strings.Join(parts, ", ")
}

// ciLines passes text on a line at a time, each through textout.CILine:
// a line RenderText prints may begin with a foreign string (a family, a
// row's label, an Entry), and none may begin a CI workflow command.
type ciLines struct {
	w   io.Writer
	buf []byte
}

func (c *ciLines) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	for {
		i := bytes.IndexByte(c.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if _, err := io.WriteString(c.w, textout.CILine(string(c.buf[:i]))+"\n"); err != nil {
			return 0, err
		}
		c.buf = c.buf[i+1:]
	}
}
