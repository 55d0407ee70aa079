package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"logjam/verdict"
)

// Flaky is the matrix's word for a cell whose repeats came out differently.
const Flaky verdict.Verdict = "FLAKY"

// Repeated is one cell of the matrix with every repeat's observation.
type Repeated struct {
	Cell        // the first repeat: name, family, expected, rerun
	Runs []Cell // every repeat, in repeat order
}

// Verdict is the verdict every repeat observed, or FLAKY.
func (r Repeated) Verdict() verdict.Verdict {
	for _, c := range r.Runs[1:] {
		if c.Observed != r.Runs[0].Observed {
			return Flaky
		}
	}
	return r.Runs[0].Observed
}

// AsExpected says whether every repeat observed the expected verdict.
func (r Repeated) AsExpected() bool { return len(r.Unexpected()) == 0 }

// Unexpected are the repeats that did not observe the expected verdict.
func (r Repeated) Unexpected() []Cell {
	var bad []Cell
	for _, c := range r.Runs {
		if !c.AsExpected() {
			bad = append(bad, c)
		}
	}
	return bad
}

// Observations is every repeat's outcome, "r1 HANG, r2 OK (check failed),
// r3 HANG"; one run is just its outcome.
func (r Repeated) Observations() string {
	if len(r.Runs) == 1 {
		return r.Runs[0].Outcome()
	}
	parts := make([]string, len(r.Runs))
	for i, c := range r.Runs {
		parts[i] = fmt.Sprintf("r%d %s", repeatOf(c, i), c.Outcome())
	}
	return strings.Join(parts, ", ")
}

func repeatOf(c Cell, i int) int {
	if c.Repeat > 0 {
		return c.Repeat
	}
	return i + 1
}

// Seconds is the time all repeats of the cell took.
func (r Repeated) Seconds() float64 {
	var ms int64
	for _, c := range r.Runs {
		ms += c.Ms
	}
	return float64(ms) / 1000
}

// Family is one family's rows and its tally.
type Family struct {
	Name              string
	Rows              []Repeated
	AsExpected, Flaky int
	Seconds           float64 // the sum of its cells' times
}

// Not is how many of the family's cells did not come out as expected.
func (f Family) Not() int { return len(f.Rows) - f.AsExpected }

// Tally is the whole matrix's count.
type Tally struct {
	Cells      int `json:"cells"`
	AsExpected int `json:"as_expected"`
	Not        int `json:"not"`
	Flaky      int `json:"flaky"`
	Runs       int `json:"runs"`
}

// Group turns every run of every cell into rows, one per cell name, in
// family order and then by scenario id, repeats in repeat order.
func Group(cells []Cell) []Family {
	byName := map[string]*Repeated{}
	var order []string
	for _, c := range cells {
		key := c.Family + "\x00" + c.Name
		r, ok := byName[key]
		if !ok {
			r = &Repeated{Cell: c}
			byName[key] = r
			order = append(order, key)
		}
		r.Runs = append(r.Runs, c)
	}
	rows := make([]Repeated, 0, len(order))
	for _, k := range order {
		r := byName[k]
		slices.SortStableFunc(r.Runs, func(a, b Cell) int { return cmp.Compare(a.Repeat, b.Repeat) })
		r.Cell = r.Runs[0]
		rows = append(rows, *r)
	}
	slices.SortStableFunc(rows, func(a, b Repeated) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Name, b.Name))
	})
	var fams []Family
	for _, r := range rows {
		if len(fams) == 0 || fams[len(fams)-1].Name != r.Family {
			fams = append(fams, Family{Name: r.Family})
		}
		f := &fams[len(fams)-1]
		f.Rows = append(f.Rows, r)
		f.Seconds += r.Seconds()
		if r.AsExpected() {
			f.AsExpected++
		}
		if r.Verdict() == Flaky {
			f.Flaky++
		}
	}
	return fams
}

// Count tallies the families.
func Count(fams []Family) Tally {
	var t Tally
	for _, f := range fams {
		t.Cells += len(f.Rows)
		t.AsExpected += f.AsExpected
		t.Flaky += f.Flaky
		for _, r := range f.Rows {
			t.Runs += len(r.Runs)
		}
	}
	t.Not = t.Cells - t.AsExpected
	return t
}

// grid lays a family out as the text matrix does: a row per scenario, a
// column per policy (or variant); beside a sink's cells, a column per
// built-in policy with its verdict there (Cell.Beside), which is no cell.
type grid struct {
	Cols, Rows []string
	At         map[[2]string]Repeated
	Beside     map[[2]string]verdict.Verdict
}

func layout(f Family) grid {
	g := grid{At: map[[2]string]Repeated{}, Beside: map[[2]string]verdict.Verdict{}}
	own := map[string]bool{}
	for _, r := range f.Rows {
		col, row := r.Column(), r.Cell.Row()
		if !slices.Contains(g.Cols, col) {
			g.Cols = append(g.Cols, col)
		}
		if !slices.Contains(g.Rows, row) {
			g.Rows = append(g.Rows, row)
		}
		g.At[[2]string{row, col}] = r
		if len(r.Beside) > 0 {
			own[col] = true
		}
		for _, p := range besideColumns(r.Cell) {
			if !slices.Contains(g.Cols, p) {
				g.Cols = append(g.Cols, p)
			}
			g.Beside[[2]string{row, p}] = r.Beside[p]
		}
	}
	slices.SortStableFunc(g.Cols, func(a, b string) int { return cmp.Compare(rankOf(own, a), rankOf(own, b)) })
	return g
}

// Diff lists how two matrices differ in their cells, expected verdicts
// and outcomes (every repeat's verdict, and whether its other checks
// passed), ignoring times and evidence; nil when they agree.
func Diff(a, b []Cell) []string {
	verdicts := func(cs []Cell) map[string]string {
		m := map[string]string{}
		for _, f := range Group(cs) {
			for _, r := range f.Rows {
				m[r.Family+": "+r.Name] = rowOutcome(r)
			}
		}
		return m
	}
	va, vb := verdicts(a), verdicts(b)
	var d []string
	for k, v := range va {
		w, ok := vb[k]
		switch {
		case !ok:
			d = append(d, "only in the first: "+k)
		case v != w:
			d = append(d, fmt.Sprintf("%s: %s vs %s", k, v, w))
		}
	}
	for k := range vb {
		if _, ok := va[k]; !ok {
			d = append(d, "only in the second: "+k)
		}
	}
	slices.Sort(d)
	return d
}

// rowOutcome is a row's expected verdict and every repeat's outcome,
// "expected OK, observed HANG (not as expected)".
func rowOutcome(r Repeated) string {
	s := fmt.Sprintf("expected %s, observed %s", r.Expected, r.Observations())
	if !r.AsExpected() {
		s += " (not as expected)"
	}
	return s
}

// Collapse is the matrix with one cell per cell, for the text table: its
// verdict over the repeats (a FLAKY cell names each repeat's verdict).
func Collapse(fams []Family) Matrix {
	var m Matrix
	for _, f := range fams {
		for _, r := range f.Rows {
			c := r.Cell
			for _, bad := range r.Unexpected() {
				if c.Failure == "" && bad.Failure != "" {
					c.Failure = bad.Failure // a later repeat failed a check
				}
			}
			c.Observed = r.Verdict()
			if c.Observed == Flaky {
				c.Observed = verdict.Verdict("FLAKY(" + strings.ReplaceAll(r.Observations(), ", ", ",") + ")")
			}
			m = append(m, c)
		}
	}
	return m
}
