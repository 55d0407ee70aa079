// Command logjam runs the chaos suites with a profile from ginkgo.yml and
// renders their matrix: reports/matrix.json and a table, with the command
// that reruns each cell that did not come out as expected.
//
//	logjam chaos [-profile local|nightly|focus] [-focus REGEXP] [-procs N]
//	logjam report [reports/ginkgo.json]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/config"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout)) }

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "logjam: "+format+"\n", args...)
	return 2
}

func run(args []string, w io.Writer) int {
	if len(args) == 0 {
		return fail("usage: logjam chaos [-profile P] [-focus REGEXP] | logjam report [FILE]")
	}
	switch args[0] {
	case "chaos":
		return chaos(args[1:], w)
	case "report":
		path := filepath.Join("reports", "ginkgo.json")
		if len(args) > 2 {
			return fail("usage: logjam report [FILE]")
		}
		if len(args) == 2 {
			path = args[1]
		}
		n, err := render(path, filepath.Join(filepath.Dir(path), "matrix.json"), w)
		if err != nil {
			return fail("%v", err)
		}
		if n > 0 {
			return 1
		}
		return 0
	}
	return fail("unknown command %q (accepted: chaos, report)", args[0])
}

func chaos(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	profile := fs.String("profile", envOr("LOGJAM_PROFILE", "local"), "run profile from ginkgo.yml")
	focus := fs.String("focus", "", "run only the cells whose names match")
	procs := fs.Int("procs", 1, "parallel spec processes per suite")
	if err := fs.Parse(args); err != nil {
		return fail("chaos: %v (usage: logjam chaos [-profile P] [-focus REGEXP] [-procs N])", err)
	}
	wd, _ := os.Getwd()
	cfgPath, err := config.Find(wd)
	if err != nil {
		return fail("%v", err)
	}
	prof, err := config.Load(cfgPath, *profile)
	if err != nil {
		return fail("%v", err)
	}
	root := filepath.Dir(cfgPath)
	reports := filepath.Join(root, "reports")
	if err := os.MkdirAll(reports, 0o755); err != nil {
		return fail("%v", err)
	}
	_ = os.RemoveAll(filepath.Join(reports, "evidence"))
	gargs := []string{"tool", "ginkgo", "-r", "--keep-going", "--output-dir=" + reports, "--json-report=ginkgo.json",
		fmt.Sprintf("--procs=%d", *procs), "--silence-skips"}
	if prof.Repeat > 1 {
		gargs = append(gargs, fmt.Sprintf("--repeat=%d", prof.Repeat-1))
	}
	if *focus != "" {
		gargs = append(gargs, "--focus="+*focus)
	}
	env := append(os.Environ(), "LOGJAM_PROFILE="+prof.Name)
	if prof.Seed != 0 {
		// One seed for Ginkgo's spec order and the seeded checks (LOGJAM_SEED);
		// with 0, Ginkgo picks one and prints it.
		gargs = append(gargs, fmt.Sprintf("--seed=%d", prof.Seed))
		env = append(env, fmt.Sprintf("LOGJAM_SEED=%d", prof.Seed))
	}
	gargs = append(gargs, "./suites")
	fmt.Fprintf(w, "logjam: profile %s (deadline %s x %.2g, %s mode): go %s\n", prof.Name, prof.Deadline, prof.TimeoutScale, prof.Mode, strings.Join(gargs, " "))
	cmd := exec.Command("go", gargs...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	cmd.Env = env
	runErr := cmd.Run()
	n, err := render(filepath.Join(reports, "ginkgo.json"), filepath.Join(reports, "matrix.json"), w)
	if err != nil {
		return fail("%v", err)
	}
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		return fail("running ginkgo: %v", runErr)
	}
	if runErr != nil || n > 0 {
		return 1
	}
	return 0
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// Cell is one row of reports/matrix.json.
type Cell struct {
	ID       string         `json:"id"`
	Name     string         `json:"name"`
	Family   string         `json:"family"`
	Scenario string         `json:"scenario"`
	Policy   string         `json:"policy,omitempty"`
	Variant  string         `json:"variant,omitempty"`
	Backend  string         `json:"backend,omitempty"`
	Platform string         `json:"platform,omitempty"`
	Python   string         `json:"python,omitempty"`
	Expected string         `json:"expected"`
	Observed string         `json:"observed"`
	Ms       int64          `json:"ms"`
	Rerun    string         `json:"rerun"`
	Bundle   string         `json:"bundle,omitempty"`
	Evidence map[string]any `json:"evidence"`
}

// render reads a Ginkgo JSON report, writes the matrix and prints it; it
// returns how many cells differ from their expected verdict.
func render(reportPath, matrixPath string, w io.Writer) (int, error) {
	raw, err := os.ReadFile(reportPath)
	if err != nil {
		return 0, fmt.Errorf("no report to render: %v", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return 0, fmt.Errorf("%s is not a Ginkgo JSON report: %v", reportPath, err)
	}
	var cells []Cell
	for _, r := range reports {
		for _, sr := range r.SpecReports {
			for _, e := range sr.ReportEntries {
				if e.Name != "cell" {
					continue
				}
				var s string
				if json.Unmarshal([]byte(e.Value.AsJSON), &s) != nil {
					continue
				}
				var full map[string]any
				var c Cell
				if json.Unmarshal([]byte(s), &c) != nil || json.Unmarshal([]byte(s), &full) != nil {
					continue
				}
				c.Evidence = map[string]any{}
				for _, k := range []string{"reason", "cycle", "ledger", "command"} {
					if v, ok := full[k]; ok {
						c.Evidence[k] = v
					}
				}
				cells = append(cells, c)
			}
		}
	}
	sort.SliceStable(cells, func(i, j int) bool {
		if cells[i].Family != cells[j].Family {
			return cells[i].Family < cells[j].Family
		}
		return cells[i].ID < cells[j].ID
	})
	b, _ := json.MarshalIndent(cells, "", "  ")
	if err := os.WriteFile(matrixPath, b, 0o644); err != nil {
		return 0, err
	}
	return printMatrix(cells, w), nil
}

// printMatrix prints one table per family: a row per scenario, a column per
// policy (or variant/backend); "!" marks an observation that differs from
// the expected verdict (shown after "/").
func printMatrix(cells []Cell, w io.Writer) int {
	byFamily := map[string][]Cell{}
	var families []string
	for _, c := range cells {
		if _, ok := byFamily[c.Family]; !ok {
			families = append(families, c.Family)
		}
		byFamily[c.Family] = append(byFamily[c.Family], c)
	}
	bad := 0
	var reruns []string
	for _, f := range families {
		cs := byFamily[f]
		var cols, rows []string
		grid := map[[2]string]string{}
		for _, c := range cs {
			col, row := column(c), rowOf(c)
			if !contains(cols, col) {
				cols = append(cols, col)
			}
			if !contains(rows, row) {
				rows = append(rows, row)
			}
			v := c.Observed
			if c.Observed != c.Expected {
				v = "!" + c.Observed + "/" + c.Expected
				bad++
				reruns = append(reruns, c.Rerun)
			}
			grid[[2]string{row, col}] = v
		}
		sort.SliceStable(cols, func(i, j int) bool { return rank(cols[i]) < rank(cols[j]) })
		fmt.Fprintf(w, "\n%s (%d cells)\n", f, len(cs))
		width := 12
		for _, col := range cols {
			width = max(width, len(col)+2)
		}
		for _, v := range grid {
			width = max(width, len(v)+2)
		}
		fmt.Fprintf(w, "%-12s", "id")
		for _, col := range cols {
			fmt.Fprintf(w, "%-*s", width, col)
		}
		fmt.Fprintln(w)
		for _, r := range rows {
			fmt.Fprintf(w, "%-12s", r)
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
	fmt.Fprintf(w, "\n%d cells, %d as expected, %d not\n", len(cells), len(cells)-bad, bad)
	for _, r := range reruns {
		fmt.Fprintf(w, "rerun: %s\n", r)
	}
	return bad
}

// column is the policy, or the lazy-init variant; rowOf is the scenario,
// with its platform (when not linux) or its backend.
func column(c Cell) string {
	switch {
	case c.Variant != "":
		return c.Variant
	case c.Policy != "":
		return c.Policy
	}
	return "verdict"
}

func rowOf(c Cell) string {
	switch {
	case c.Backend != "":
		return c.ID + "/" + c.Backend
	case c.Platform != "" && c.Platform != "linux":
		return c.ID + "@" + c.Platform
	}
	return c.ID
}

// rank orders columns as the seed's history does.
func rank(col string) int {
	for i, name := range []string{"pystderr", "fd2", "buffered", "adaptive", "merged", "logjam", "old", "initfast", "norace", "fixed"} {
		if col == name {
			return i
		}
	}
	return 100
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
