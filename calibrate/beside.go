package calibrate

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/internal/axes"
	"logjam/internal/config"
	"logjam/scenario"
	"logjam/verdict"
)

// SimSpec is the simulated cell of a real row under policy on one
// interpreter with sys.stderr's buffering buf: the same contract, deadline
// and (for a row random search found) schedule the real column is judged
// against.
func SimSpec(row Row, policy, python, buf string) (cell.Spec, error) {
	spec := cell.Spec{Cell: scenario.Cell{Scenario: row.ID, Policy: policy, Platform: scenario.DefaultPlatform, Python: python, Buffering: buf}}
	if info, err := scenario.Lookup(row.ID); err == nil && info.Contract.Ends == scenario.EndsKilled {
		spec.Deadline = row.Deadline // blocks by design: judged at the row's deadline, as suites/fatal's F2
	}
	s, ok, err := row.ScheduleFor(policy, python, buf)
	if err != nil {
		return spec, err
	}
	if ok { // a random-found row: scenario R with its schedule, as suites/random plays it
		spec.Scenario, spec.Schedule, spec.Failpoints, spec.Deadline = "R", s.Encode(), s.Failpoints(), row.Deadline
	}
	return spec, nil
}

// Beside is one (row, python, buffering) a user's sink played, with the
// built-in policies' verdicts there: each the model's cell, played now.
// The real column agrees with the model on every real row on the
// interpreters here (make calibrate), so the model stands for the real
// built-in sinks at a small part of their cost.
type Beside struct {
	Row, Python, Buffering string
	Yours                  verdict.Verdict
	BuiltIn                map[string]verdict.Verdict // by policy; a cell the row leaves out is absent
}

// PlayBeside plays the built-in policies' simulated cells for every
// (row, python, buffering) of cells, j at a time, with the child bin; the
// sink's own verdict there is its first play's.
func PlayBeside(ctx context.Context, bin string, prof config.Profile, cells []SinkCell, j int) ([]Beside, error) {
	var out []Beside
	seen := map[string]bool{}
	for _, c := range cells {
		k := c.Row + "\x00" + c.Python + "\x00" + c.Buffering
		if !seen[k] {
			seen[k] = true
			out = append(out, Beside{Row: c.Row, Python: c.Python, Buffering: c.Buffering, Yours: c.Verdict, BuiltIn: map[string]verdict.Verdict{}})
		}
	}
	type job struct {
		i      int
		policy string
		spec   cell.Spec
	}
	var jobs []job
	for i, b := range out {
		row, ok := rowByID(b.Row)
		if !ok {
			return nil, fmt.Errorf("no real row %q", b.Row)
		}
		buf := bufferingOf(b.Buffering)
		for _, p := range axes.Policies {
			if !row.Plays(p, buf) {
				continue
			}
			spec, err := SimSpec(row, p, b.Python, buf)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, job{i, p, spec})
		}
	}
	if j < 1 {
		j = runtime.NumCPU()
	}
	var mu sync.Mutex // guards out's BuiltIn maps
	var g errgroup.Group
	g.SetLimit(j)
	for _, jb := range jobs {
		g.Go(func() error {
			o, err := cell.Run(ctx, bin, jb.spec, prof)
			if err != nil {
				return fmt.Errorf("%s under %s: %w", out[jb.i].Row, jb.policy, err)
			}
			mu.Lock()
			out[jb.i].BuiltIn[jb.policy] = o.Observed
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

// Closest is the built-in policy whose verdicts match the sink's on the
// most cells (the earlier in axes.Policies on a tie), and the cells where
// they differ.
func Closest(bs []Beside) (policy string, differ []Beside) {
	best := -1
	for _, p := range axes.Policies {
		same := 0
		var d []Beside
		for _, b := range bs {
			if v, ok := b.BuiltIn[p]; ok && v == b.Yours {
				same++
			} else {
				d = append(d, b)
			}
		}
		if same > best {
			best, policy, differ = same, p, d
		}
	}
	return policy, differ
}

// closestLine names the built-in policy the sink behaves most like
// (Closest over each cell's first play and its Beside) and where it
// differs, a group per row and pair of verdicts ("D3 on 10 cells: CRASH
// where pystderr is HANG"); "" when no cell has built-in columns.
func closestLine(name string, cells []report.Cell) string {
	var bs []Beside
	seen := map[string]bool{}
	for _, c := range cells {
		if len(c.Beside) == 0 || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		bs = append(bs, Beside{Row: c.ID, Python: c.Python, Buffering: BufferingName(c.Buffering), Yours: c.Observed, BuiltIn: c.Beside})
	}
	if len(bs) == 0 {
		return ""
	}
	p, differ := Closest(bs)
	if len(differ) == 0 {
		return fmt.Sprintf("%s behaves like %s on every cell played", name, p)
	}
	type pair struct{ row, yours, theirs string }
	var order []pair
	at := map[pair][]string{}
	for _, b := range differ {
		theirs := "not played"
		if v, ok := b.BuiltIn[p]; ok {
			theirs = string(v)
		}
		k := pair{b.Row, string(b.Yours), theirs}
		if at[k] == nil {
			order = append(order, k)
		}
		at[k] = append(at[k], b.Python+" "+b.Buffering)
	}
	var parts []string
	for i, k := range order {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("and %d more", len(order)-i))
			break
		}
		where := strings.Join(at[k], ", ")
		if len(at[k]) > 2 {
			where = fmt.Sprintf("%d cells", len(at[k]))
		}
		parts = append(parts, fmt.Sprintf("%s on %s: %s where %s is %s", k.row, where, k.yours, p, k.theirs))
	}
	return fmt.Sprintf("%s behaves like %s except on %s", name, p, strings.Join(parts, "; "))
}

func rowByID(id string) (Row, bool) {
	i := slices.IndexFunc(Rows, func(r Row) bool { return r.ID == id })
	if i < 0 {
		return Row{}, false
	}
	return Rows[i], true
}

// bufferingOf is BufferingName's inverse: the cell's Buffering for its
// name.
func bufferingOf(name string) string {
	if name == BufferingName(Unbuffered) {
		return Unbuffered
	}
	return Buffered
}
