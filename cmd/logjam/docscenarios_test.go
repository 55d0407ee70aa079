package main_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"logjam/harness/report"
	"logjam/internal/axes"
	"logjam/scenario"
)

// docRow is one row of docs/SCENARIOS.md's matrix tables: its summary (""
// where the table has no scenario column) and its verdict per column.
type docRow struct {
	summary  string
	verdicts map[string]string
}

// eachMatrixRow calls fn for each row of docs/SCENARIOS.md's tables whose
// columns are the policies or the lazy-init variants: its line's index, the
// table's head and the row's cells, trimmed (cells[0] its label: "D1", "I1
// unbuffered", "P4@macos", "L1/cuda").
func eachMatrixRow(lines []string, fn func(i int, head, cells []string)) {
	columns := axes.Columns()
	var head []string
	for i, line := range lines {
		if !strings.HasPrefix(line, "| ") {
			head = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		switch {
		case head == nil:
			head = cells
		case strings.HasPrefix(cells[0], "---"), head[0] != "row", !slices.Contains(columns, head[len(head)-1]):
			// the head's rule, or another table (the harness's, the references')
		default:
			fn(i, head, cells)
		}
	}
}

// scenarioTables reads those rows by label; a label twice is an error.
func scenarioTables(t *testing.T, doc string) map[string]docRow {
	t.Helper()
	rows := map[string]docRow{}
	eachMatrixRow(strings.Split(doc, "\n"), func(_ int, head, cells []string) {
		r := docRow{verdicts: map[string]string{}}
		for i, h := range head[1:] {
			if h == "scenario" {
				r.summary = cells[i+1]
			} else {
				r.verdicts[h] = cells[i+1]
			}
		}
		if _, dup := rows[cells[0]]; dup {
			t.Errorf("docs/SCENARIOS.md has row %q twice", cells[0])
		}
		rows[cells[0]] = r
	})
	return rows
}

// updateScenarios rewrites docs/SCENARIOS.md's table rows from the suites
// and the catalogue: go test ./cmd/logjam -run TestSCENARIOS -update-scenarios.
var updateScenarios = flag.Bool("update-scenarios", false, "rewrite docs/SCENARIOS.md's matrix rows from the suites' expected verdicts and the catalogue's summaries")

// docs/SCENARIOS.md's matrix is the suites' own: every cell the local
// matrix runs (logjam list -expected, read from the compiled suites) is a
// row and column of its tables with the verdict the cell's Entry expects,
// every row of the tables is a row of cells, and a row's summary is its
// scenario's in the catalogue. A verdict changed in a suite, a row added
// or a summary reworded without the doc fails here.
func TestSCENARIOSShowsTheSuitesExpectedMatrix(t *testing.T) {
	root := suiteTest(t, "compiles the suites to list their cells")
	cmd := exec.Command(logjamBin, "list", "-expected")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "LOGJAM_PROFILE=local", "LOGJAM_RANDOM_ROWS=", "LOGJAM_RANDOM_RUNS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("logjam list -expected: %v", err)
	}
	tree := map[string]map[string]string{} // row label -> column -> expected
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fam, rest, _ := strings.Cut(line, " ")
		name, expected, ok := strings.Cut(strings.TrimSpace(rest), "\t")
		if !ok {
			t.Fatalf("logjam list -expected printed %q: no verdict after the name", line)
		}
		if expected == "-" || fam == "harness" {
			continue // no cell (a random run, a check), or the watchdog's own (their table is another)
		}
		c, ok := report.CellNamed(fam, name)
		if !ok {
			t.Fatalf("logjam list -expected named %q, which names no cell", name)
		}
		row := c.Row()
		if tree[row] == nil {
			tree[row] = map[string]string{}
		}
		tree[row][c.Column()] = expected
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "SCENARIOS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if *updateScenarios {
		doc = rewriteScenarioTables(string(doc), tree)
		if err := os.WriteFile(filepath.Join(root, "docs", "SCENARIOS.md"), doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows := scenarioTables(t, string(doc))
	for row, cols := range tree {
		d, ok := rows[row]
		if !ok {
			t.Errorf("docs/SCENARIOS.md has no row %q (the suites expect %v)", row, cols)
			continue
		}
		for col, want := range cols {
			if got := d.verdicts[col]; got != want {
				t.Errorf("docs/SCENARIOS.md row %q says %s %q, the suites expect %s", row, col, got, want)
			}
		}
	}
	for row, d := range rows {
		if _, ok := tree[row]; !ok {
			t.Errorf("docs/SCENARIOS.md has row %q, which no cell of the local matrix is", row)
			continue
		}
		if d.summary == "" {
			continue
		}
		if sum, err := summaryOf(row); err != nil {
			t.Errorf("docs/SCENARIOS.md row %q: %v", row, err)
		} else if d.summary != sum {
			t.Errorf("docs/SCENARIOS.md row %q says\n  %q\nthe catalogue says\n  %q\n(go test ./cmd/logjam -run TestSCENARIOS -update-scenarios rewrites the rows)", row, d.summary, sum)
		}
	}
}

// summaryOf is the catalogue's summary of a row label's scenario.
func summaryOf(row string) (string, error) {
	id := strings.FieldsFunc(row, func(r rune) bool { return r == ' ' || r == '@' || r == '/' })[0]
	in, err := scenario.Lookup(id)
	if err != nil {
		return "", err
	}
	return in.Summary, nil
}

// rewriteScenarioTables gives each row of the policy and variant tables the
// suites' verdicts and the catalogue's summary; rows and their order stay.
func rewriteScenarioTables(doc string, tree map[string]map[string]string) []byte {
	lines := strings.Split(doc, "\n")
	eachMatrixRow(lines, func(i int, head, cells []string) {
		for j, h := range head[1:] {
			switch {
			case h == "scenario":
				if sum, err := summaryOf(cells[0]); err == nil {
					cells[j+1] = sum
				}
			case tree[cells[0]][h] != "":
				cells[j+1] = tree[cells[0]][h]
			}
		}
		lines[i] = "| " + strings.Join(cells, " | ") + " |"
	})
	return []byte(strings.Join(lines, "\n"))
}
