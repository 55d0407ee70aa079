package report

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"

	"logjam/internal/axes"
	"logjam/internal/textout"
	"logjam/verdict"
)

// summaryOf is a cell not as expected summed up once, gotestsum-style,
// after the matrix: its Entry's line (where the expected verdict is
// written) and name, what was expected and observed, then, each on a line
// of its own, the failed check, the reason, the cycle when one formed, its
// evidence bundle and its rerun command. Each field is clipped and
// neutralised: a cell may come from someone else's shard; the rerun is
// built by RerunOf, never copied from the matrix.
func summaryOf(c Cell) string {
	var b strings.Builder
	clip := func(s string) string {
		if len(s) > 400 {
			s = s[:400] + "..."
		}
		return textout.Terminal(s)
	}
	if c.Entry != "" {
		fmt.Fprintf(&b, "%s: ", clip(c.Entry))
	}
	fmt.Fprintf(&b, "%s %s: ", clip(c.Family), clip(c.Name))
	switch {
	case c.Observed == SpecFail:
		b.WriteString("the spec failed outside any cell")
	case c.VerdictMatches():
		fmt.Fprintf(&b, "%s as expected, but another check of its spec failed", clip(string(c.Observed)))
	default:
		fmt.Fprintf(&b, "expected %s, observed %s", clip(string(c.Expected)), clip(string(c.Observed)))
	}
	if c.Failure != "" {
		fmt.Fprintf(&b, "\n  failed: %s", clip(c.FailureLine()))
	}
	if r := c.Evidence.Reason; r != "" {
		fmt.Fprintf(&b, "\n  reason: %s", clip(r))
	}
	if cy := c.Evidence.Cycle; cy != "" {
		fmt.Fprintf(&b, "\n  cycle: %s", clip(cy))
	}
	switch {
	case c.Sink != nil && c.Bundle != "":
		fmt.Fprintf(&b, "\n  evidence: %s", clip(SinkReplay(c)))
	case c.Bundle != "":
		fmt.Fprintf(&b, "\n  evidence: ./logjam replay %s", clip(c.Bundle))
	}
	if c.Rerun != "" {
		if r := RerunOf(c); r != "" {
			fmt.Fprintf(&b, "\n  rerun: %s", textout.Terminal(r))
		} else {
			b.WriteString("\n  rerun: (the recorded command is not one logjam writes; not shown)")
		}
	}
	return b.String()
}

// The styles of a cell on a terminal (RenderStyledText): a verdict as
// expected that is no OK is the ground truth, shown apart from a cell
// not as expected, which alone is red.
const (
	styleExpected   = "\x1b[33m"   // yellow: an expected HANG, LOST, ...
	styleUnexpected = "\x1b[1;31m" // bold red
	styleDim        = "\x1b[2m"    // NOTRUN, the legend
	styleReset      = "\x1b[0m"
)

// RenderText prints one table per family, a row per scenario and a column
// per policy (or lazy-init variant); "!" marks an observation that differs
// from the expected verdict (shown after "/"), "+check" a matching verdict
// whose spec failed another check, "!FAIL" a spec that failed outside
// any cell; a NOTRUN cell (an interrupted run never started it) is
// neither. Then the counts, the legend (Legend, on every run), and each
// cell not as expected summed up once (summaryOf). It returns how many
// cells were unexpected.
//
// Every string in a cell may come from someone else's shard: each field is
// shown with textout.Terminal (no escape sequence or newline is sent), each
// line with textout.CILine (none begins a CI workflow command), and each
// rerun command is built by RerunOf, never copied from the matrix.
func RenderText(w io.Writer, m Matrix) int { return RenderStyledText(w, m, false) }

// Styled says whether text written to w gets colour: w is a terminal and
// NO_COLOR (https://no-color.org) is unset or empty; a log or a pipe never
// gets escapes.
func Styled(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
}

// RenderStyledText is RenderText, with colour when colour is set (Styled:
// the caller decides): an expected verdict
// other than OK yellow, a cell not as expected red, NOTRUN and the legend
// dim. The escapes are logjam's own, added after each foreign string was
// neutralised.
func RenderStyledText(w io.Writer, m Matrix, colour bool) int {
	raw := w
	w = &ciLines{w: w}
	style := func(st, s string) string {
		if !colour || st == "" {
			return s
		}
		return st + s + styleReset
	}
	byFamily := map[string][]Cell{}
	var families []string
	for _, c := range m {
		if _, ok := byFamily[c.Family]; !ok {
			families = append(families, c.Family)
		}
		byFamily[c.Family] = append(byFamily[c.Family], c)
	}
	var summaries []string
	notRun := 0
	type shown struct{ text, style string }
	for _, f := range families {
		cs := byFamily[f]
		var cols, rows []string
		grid := map[[2]string]shown{}
		own := map[string]bool{} // a sink's column, before the built-in ones beside it
		for _, c := range cs {
			col, row := textout.Terminal(c.Column()), textout.Terminal(c.Row())
			if !slices.Contains(cols, col) {
				cols = append(cols, col)
			}
			if !slices.Contains(rows, row) {
				rows = append(rows, row)
			}
			v := textout.Terminal(string(c.Observed))
			st := ""
			switch {
			case c.Observed == verdict.NotRun:
				notRun++
				st = styleDim
			case !c.AsExpected():
				st = styleUnexpected
				switch {
				case c.Observed == SpecFail:
					v = "!" + string(SpecFail)
				case c.VerdictMatches():
					v = "!" + v + "+check"
				default:
					v = "!" + v + "/" + textout.Terminal(string(c.Expected))
				}
				summaries = append(summaries, summaryOf(c))
			case c.Observed != verdict.OK:
				st = styleExpected
			}
			if rt := c.RealText(); rt != "" && c.Family != "sink" { // a sink's verdict is the real one
				v += " | " + textout.Terminal(rt)
			}
			grid[[2]string{row, col}] = shown{v, st}
			if len(c.Beside) > 0 {
				own[col] = true
			}
			for _, p := range besideColumns(c) {
				if !slices.Contains(cols, p) {
					cols = append(cols, p)
				}
				if _, ok := grid[[2]string{row, p}]; !ok {
					grid[[2]string{row, p}] = shown{textout.Terminal(string(c.Beside[p])), ""}
				}
			}
		}
		slices.SortStableFunc(cols, func(a, b string) int { return rankOf(own, a) - rankOf(own, b) })
		fmt.Fprintf(w, "\n%s (%d cells)\n", textout.Terminal(f), len(cs))
		width := 12
		for _, col := range cols {
			width = max(width, len(col)+2)
		}
		for _, v := range grid {
			width = max(width, len(v.text)+2)
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
		// A grid line goes straight to raw: its label through CILine (it
		// begins the line), each cell already neutralised, then styled.
		for _, r := range rows {
			var line strings.Builder
			line.WriteString(textout.CILine(fmt.Sprintf("%-*s", idWidth, r)))
			for _, col := range cols {
				v, ok := grid[[2]string{r, col}]
				if !ok {
					v.text = "-"
				}
				line.WriteString(style(v.style, v.text) + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(v.text))))
			}
			fmt.Fprintln(raw, line.String())
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
	fmt.Fprintln(w, "legend:")
	for _, l := range LegendOf(m) {
		fmt.Fprintln(raw, style(styleDim, "  "+l))
	}
	if len(summaries) > 0 {
		fmt.Fprintf(raw, "\n%s\n", style(styleUnexpected, fmt.Sprintf("%d not as expected:", len(summaries))))
		for _, s := range summaries {
			fmt.Fprintln(w, s)
		}
	}
	return bad
}

// besideColumns are the built-in policies beside a sink's cell (Beside),
// in the matrix's column order; a name that is no built-in policy is left
// out (a matrix may be someone else's).
func besideColumns(c Cell) []string {
	var cols []string
	for _, p := range axes.Policies {
		if _, ok := c.Beside[p]; ok {
			cols = append(cols, p)
		}
	}
	return cols
}

// rankOf is a column's place: a sink's own column first, then as
// columnRank orders them.
func rankOf(own map[string]bool, col string) int {
	if own[col] {
		return -1
	}
	return columnRank(col)
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
