package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/harness/report"
	"logjam/scenario"
	"logjam/verdict"
)

// planWithin bounds the dry runs that list an interrupted run's cells.
const planWithin = 20 * time.Second

// notRunCells is a NOTRUN row for every cell the run would have run (a dry
// run of each family's compiled suite under the focus and the shard) that
// no repeat observed. A family that cannot be listed (not built, or its
// dry run failed) is one row, ID "*", saying why. A second Ctrl-C kills
// the dry runs (they are registered with st).
func notRunCells(o chaosOptions, fams []string, bins map[string]string, env []string, observed []report.Cell, st *stopper) []report.Cell {
	seen := map[string]bool{}
	for _, c := range observed {
		seen[c.Family+"\x00"+c.Name] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), planWithin)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var rows []report.Cell
	for _, fam := range fams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			planned, err := dryRun(ctx, o, fam, bins[fam], env, st)
			var cs []report.Cell
			if err != nil {
				cs = []report.Cell{{ID: "*", Cell: scenario.Cell{Scenario: "*"}, Name: fam + " (not listed)", Family: fam, Observed: verdict.NotRun,
					Evidence: report.Evidence{Reason: "the run was interrupted; its cells could not be listed: " + err.Error()}}}
			}
			for _, c := range planned {
				if !seen[fam+"\x00"+c.Name] {
					cs = append(cs, c)
				}
			}
			mu.Lock()
			rows = append(rows, cs...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return rows
}

// dryRun lists the cells of one family's compiled suite that this run
// selects, without running any (Ginkgo's dry run), as NOTRUN rows.
func dryRun(ctx context.Context, o chaosOptions, fam, bin string, env []string, st *stopper) ([]report.Cell, error) {
	specs, err := plannedSpecs(ctx, o, fam, bin, env, st)
	if err != nil {
		return nil, err
	}
	var cells []report.Cell
	for _, sp := range specs {
		if c, ok := notRunCell(o, fam, sp.name); ok {
			c.Spec = sp.full
			cells = append(cells, c)
		}
	}
	return cells, nil
}

// plannedSpecs names the specs of one family's compiled suite that the
// focus and the shard select, in the suite's order, running none.
func plannedSpecs(ctx context.Context, o chaosOptions, fam, bin string, env []string, st *stopper) ([]plannedName, error) {
	if bin == "" {
		return nil, fmt.Errorf("the suite was not built")
	}
	tmp, err := os.MkdirTemp("", "logjam-plan-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	jsonPath := filepath.Join(tmp, "plan.json")
	args := []string{"-ginkgo.dry-run", "-ginkgo.silence-skips", "-ginkgo.no-color", "-ginkgo.json-report=" + jsonPath}
	if o.labels != "" {
		args = append(args, "-ginkgo.label-filter="+o.labels)
	}
	if o.focus != "" {
		args = append(args, "-ginkgo.focus="+o.focus)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Join(o.root, "suites", fam)
	cmd.Env = env
	cmd.SysProcAttr = dieWithParent(&syscall.SysProcAttr{Setpgid: true})
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	st.addListing(cmd)
	err = cmd.Wait()
	st.done(cmd)
	if err != nil {
		return nil, fmt.Errorf("dry run: %v: %s", err, firstLine(out.String()))
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		return nil, err
	}
	var rs []types.Report
	if err := json.Unmarshal(raw, &rs); err != nil {
		return nil, fmt.Errorf("dry run: %v", err)
	}
	var names []plannedName
	for _, r := range rs {
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType != types.NodeTypeIt || sr.State != types.SpecStatePassed || !o.shard.Has(sr.FullText()) {
				continue // another node, outside the focus, or another shard's
			}
			pn := plannedName{name: sr.LeafNodeText, full: sr.FullText()}
			for _, l := range sr.Labels() {
				if v, ok := verdict.FromLabel(l); ok {
					pn.expected = string(v)
				}
			}
			names = append(names, pn)
		}
	}
	return names, nil
}

// plannedName is a spec's leaf text (a cell's name), its full text and,
// for a cell, its expected verdict (its label, verdict.Label).
type plannedName struct{ name, full, expected string }

// notRunCell is the NOTRUN row of the spec named name, if it names a cell.
func notRunCell(o chaosOptions, fam, name string) (report.Cell, bool) {
	c, ok := report.CellNamed(fam, name)
	if !ok {
		return report.Cell{}, false
	}
	c.Observed = verdict.NotRun
	c.Rerun = report.Rerun(fam, name, o.prof.Name, o.prof.Seed, os.Getenv("LOGJAM_TIMEOUT_SCALE"))
	c.Evidence = report.Evidence{Reason: "not run: the run was interrupted before this cell started"}
	return c, true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
