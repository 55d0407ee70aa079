package calibrate

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"logjam/harness/cell"
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

// WriteBeside prints the sink's verdicts beside the built-in policies',
// one line per (row, python, buffering), then the closest built-in policy
// and where the sink differs from it.
func WriteBeside(w io.Writer, name string, bs []Beside) {
	fmt.Fprintf(w, "\n%s beside the built-in policies (the model's cells, played now; the real column agrees with them here):\n", name)
	wd := max(len(name), len("MISROUTED"))
	fmt.Fprintf(w, "%-4s %-8s %-10s %-*s", "row", "python", "buffering", wd, name)
	for _, p := range axes.Policies {
		fmt.Fprintf(w, " %-9s", p)
	}
	fmt.Fprintln(w)
	for _, b := range bs {
		fmt.Fprintf(w, "%-4s %-8s %-10s %-*s", b.Row, b.Python, b.Buffering, wd, b.Yours)
		for _, p := range axes.Policies {
			v, ok := b.BuiltIn[p]
			s := "-"
			if ok {
				s = string(v)
			}
			fmt.Fprintf(w, " %-9s", s)
		}
		fmt.Fprintln(w)
	}
	p, differ := Closest(bs)
	if len(differ) == 0 {
		fmt.Fprintf(w, "%s behaves like %s on every cell played\n", name, p)
		return
	}
	var parts []string
	for i, b := range differ {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more", len(differ)-i))
			break
		}
		theirs := "not played"
		if v, ok := b.BuiltIn[p]; ok {
			theirs = string(v)
		}
		parts = append(parts, fmt.Sprintf("%s (%s %s: %s where %s is %s)", b.Row, b.Python, b.Buffering, b.Yours, p, theirs))
	}
	fmt.Fprintf(w, "%s behaves like %s except on %s\n", name, p, strings.Join(parts, ", "))
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
