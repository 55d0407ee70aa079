package report

import (
	"maps"
	"slices"
	"strings"

	"logjam/harness/ledger"
	"logjam/internal/axes"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/verdict"
)

// EntryName is the name of the Ginkgo report entry that carries one Cell
// (its value is the Cell's JSON).
const EntryName = "cell"

// Cell is one row of the matrix: which cell, what was expected and observed,
// and the evidence.
type Cell struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Family string `json:"family"`
	scenario.Cell
	// Failpoints is the cell's GO_FAILPOINTS value ("" for none).
	Failpoints string          `json:"failpoints,omitempty"`
	Expected   verdict.Verdict `json:"expected"`
	Observed   verdict.Verdict `json:"observed"`
	Ms         int64           `json:"ms"`
	Rerun      string          `json:"rerun"`
	Bundle     string          `json:"bundle,omitempty"`
	Repeat     int             `json:"repeat,omitempty"` // 1.. in a repeated run
	Evidence   Evidence        `json:"evidence"`
	// Real is the verdict of the same cell on real CPython, by interpreter
	// version (the calibrate suite); Limit names the documented limit of
	// the model that accepts a difference from it.
	Real  map[string]verdict.Verdict `json:"real,omitempty"`
	Limit string                     `json:"limit,omitempty"`
	// Sink is the user's sink a cell of logjam calibrate -sink was played
	// with: its file's base name and the SHA-256 of its source, which a
	// replay checks the user's file against before it builds it.
	Sink *SinkSource `json:"sink,omitempty"`
	// Beside is, for a cell of logjam calibrate -sink, each built-in
	// policy's verdict on the same row, Python and buffering: the model's
	// cell, played at the end of the run, for comparison. It is no cell of
	// the run: never counted, never judged.
	Beside map[string]verdict.Verdict `json:"beside,omitempty"`
	// Failure is the message of a check of the cell's spec that failed
	// besides the verdict (the row's own assertion: line order, the
	// cycle's names; a setup or cleanup of the spec): "" when every check
	// passed. A spec that failed outside any cell is a row of its own
	// (SpecRow) with its message here.
	Failure string `json:"failure,omitempty"`
	// Entry is where the cell is declared: its Entry's file (from the
	// module root) and line, where a wrong expected verdict is fixed.
	Entry string `json:"entry,omitempty"`
	// Spec is the full text of the spec the row came from (its containers'
	// texts and its own): what internal/shard splits by, and what merge
	// checks a shard's rows and plan with. "" for a row of no spec (a
	// build, a suite, a BeforeSuite).
	Spec string `json:"spec,omitempty"`
}

// Evidence is what a cell's verdict rests on.
type Evidence struct {
	Reason  string          `json:"reason"`
	Cycle   string          `json:"cycle,omitempty"`
	Ledger  ledger.Evidence `json:"ledger"`
	Command string          `json:"command"` // reruns the child alone
}

// AsExpected reports whether the observed verdict is the expected one (or
// a named limit accepts the difference) and every other check of the
// cell's spec passed.
func (c Cell) AsExpected() bool { return c.VerdictMatches() && c.Failure == "" }

// VerdictMatches reports whether the observed verdict is the expected one
// (or a named limit accepts the difference), whatever the other checks.
func (c Cell) VerdictMatches() bool { return c.Observed == c.Expected || c.Limit != "" }

// The verdicts of a row that is a spec, not a cell (SpecRow): it was
// expected to pass and failed.
const (
	SpecPass verdict.Verdict = "PASS"
	SpecFail verdict.Verdict = "FAIL"
)

// SpecRow is the row of a spec that failed outside any cell (a random run,
// a suite's setup, a suite that did not build or left no report): id is
// its short label in the table, name what it is in full.
func SpecRow(family, id, name, failure string) Cell {
	if failure == "" {
		failure = "failed without a message"
	}
	return Cell{ID: id, Name: name, Family: family, Cell: scenario.Cell{Scenario: id}, Expected: SpecPass, Observed: SpecFail, Failure: failure}
}

// Outcome is the observed verdict, and "check failed" when the verdict
// matched but another check of the spec did not.
func (c Cell) Outcome() string {
	if c.Failure != "" && c.Observed != SpecFail {
		return string(c.Observed) + " (check failed)"
	}
	return string(c.Observed)
}

// FailureLine is Failure on one line (runs of white space, newlines
// included, made one space: Gomega's message spans lines), cut at 300
// bytes, for a table.
func (c Cell) FailureLine() string {
	l := strings.Join(strings.Fields(c.Failure), " ")
	if len(l) > 300 {
		l = l[:300] + "..."
	}
	return l
}

// RealText is the real column: "real 3.12.1 OK[, ...]" ("real OK" when
// the cell's own version is the only one), with the limit that accepts a
// difference; "" without real runs.
func (c Cell) RealText() string {
	if len(c.Real) == 0 {
		return ""
	}
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(c.Real)) {
		if len(c.Real) == 1 && v == c.Python {
			parts = append(parts, string(c.Real[v])) // the row names the version
			break
		}
		parts = append(parts, v+" "+string(c.Real[v]))
	}
	s := "real " + strings.Join(parts, ", ")
	if c.Limit != "" {
		s += " (limit " + c.Limit + ")"
	}
	return s
}

// Column is the cell's matrix column: its policy, or its lazy-init variant.
func (c Cell) Column() string {
	switch {
	case c.Variant != "":
		return c.Variant
	case c.Policy != "":
		return c.Policy
	}
	return "verdict"
}

// CellNamed is the cell a spec of family fam named name plays, as the
// suites name their cells: a catalogue cell (its scenario, cell and
// failpoints, parsed from the name) or a row random search found (played
// by scenario R under the name's policy); ok is false for a name that
// names no cell (a random run, a check).
func CellNamed(fam, name string) (Cell, bool) {
	if id, fps, err := scenario.Parse(name); err == nil {
		return Cell{ID: id.Scenario, Cell: id, Name: name, Family: fam, Failpoints: fps.Env()}, true
	}
	if row, policy, ok := schedule.ParseCellName(name); ok {
		return Cell{ID: row, Cell: scenario.Cell{Scenario: "R", Policy: policy}.WithDefaults(), Name: name, Family: fam}, true
	}
	return Cell{}, false
}

// Row is the cell's matrix row: the scenario, with its platform (when not
// linux) or its backend, and the first failpoint it runs with.
func (c Cell) Row() string {
	if fps := c.Failpoints; fps != "" {
		c.Failpoints = ""
		return c.Row() + " +" + strings.TrimPrefix(strings.SplitN(fps, "=", 2)[0], "logjam/")
	}
	if c.Buffering != "" {
		s := c.Buffering
		c.Buffering = ""
		return c.Row() + " " + s
	}
	// A real column, or a version other than the matrix's default
	// (3.10's U rows, the daemon rows), names its Python: rows never share a line.
	if c.Python != "" && (len(c.Real) > 0 || c.Python != scenario.DefaultPython) {
		p := c.Python
		c.Python = ""
		return c.Row() + " py" + p
	}
	switch {
	case c.Backend != "":
		return c.ID + "/" + c.Backend
	case c.Platform != "" && c.Platform != "linux":
		return c.ID + "@" + c.Platform
	}
	return c.ID
}

// Matrix is every cell of a run; as JSON, an array of cells.
type Matrix []Cell

// Sort orders the cells by family, then id (stable otherwise).
func (m Matrix) Sort() {
	slices.SortStableFunc(m, func(a, b Cell) int {
		if c := strings.Compare(a.Family, b.Family); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Unexpected counts the cells whose observation differs from the expected.
func (m Matrix) Unexpected() int {
	n := 0
	for _, c := range m {
		if !c.AsExpected() {
			n++
		}
	}
	return n
}

// columnRank orders columns as the seed's history does (axes.Columns).
func columnRank(col string) int {
	if i := slices.Index(axes.Columns(), col); i >= 0 {
		return i
	}
	return 100
}

// SinkSource names the source of a user's sink: the file's base name and
// the hex SHA-256 of its bytes, and the absolute path it was read from
// (what the printed replay and rerun commands name, once it validates:
// SinkPath).
type SinkSource struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Path   string `json:"path,omitempty"`
}
