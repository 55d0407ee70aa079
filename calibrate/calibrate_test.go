package calibrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"logjam/calibrate"
	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/internal/axes"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

// The real column: one Entry per (row, policy or lazy variant, stderr
// buffering, interpreter). Each runs the simulated cell (cell.Run, same spec:
// platform linux, the interpreter's version, the buffering) and the
// real one, judged alike; the cell fails when they differ, unless a named
// limit (calibrate.Limits) accepts it. A run that could not be made fails.
//
// Knobs: LOGJAM_CALIBRATE_PY=3.12,3.13.0 keeps those versions (default:
// every interpreter found; LOGJAM_CALIBRATE_PY=default keeps python3 only);
// LOGJAM_CALIBRATE_ROOTS=dir:dir replaces ~/.pyenv/versions;
// LOGJAM_CALIBRATE_BUFFERING=buffered|unbuffered; LOGJAM_CALIBRATE_ROWS=D1,I2;
// LOGJAM_CALIBRATE_REPEAT=20 runs each real cell 20 times and reports the
// agreement rate (make calibrate-stress); LOGJAM_CALIBRATE_J=N plays N cells
// at a time (ahead_test.go); LOGJAM_TIMEOUT_SCALE scales every
// deadline; LOGJAM_CALIBRATE_REPORT names the matrix written (default
// reports/calibration.json).

const family = "calibrate"

var (
	// interps are the interpreters calibrated; TestCalibrate finds them
	// (only when the real runs are asked for), before the tree is built.
	interps []calibrate.Interpreter

	buildMu sync.Mutex
	builds  = map[string]*builtExt{} // by version: each built once, interpreters side by side
)

type builtExt struct {
	once sync.Once
	dir  string
	err  error
}

var _ = suitekit.BuildChild()

func selectInterps() ([]calibrate.Interpreter, string) {
	var roots []string
	if r := os.Getenv("LOGJAM_CALIBRATE_ROOTS"); r != "" {
		roots = filepath.SplitList(r)
	}
	want := os.Getenv("LOGJAM_CALIBRATE_PY")
	if want == "default" {
		in, err := calibrate.Default()
		if err != nil {
			return nil, err.Error()
		}
		return []calibrate.Interpreter{in}, ""
	}
	all := calibrate.Discover(roots...)
	if want == "" {
		return all, ""
	}
	var out []calibrate.Interpreter
	for _, in := range all {
		for _, w := range strings.Split(want, ",") {
			if w == in.Short() || w == in.Version {
				out = append(out, in)
			}
		}
	}
	return out, ""
}

func whyNot(ins []calibrate.Interpreter, why string) string {
	if len(ins) == 0 {
		if why == "" {
			why = "no python3 (3.10-3.13) on PATH or under the pyenv root"
		}
		return "calibrate: no real runs: " + why + " (install python3 and python3-dev)"
	}
	if _, err := calibrate.Compiler(); err != nil {
		return "calibrate: no real runs: no C++ compiler (g++ or $CXX) to build the extension (install g++)"
	}
	for _, in := range ins {
		if in.Missing == "" {
			return ""
		}
	}
	return "calibrate: no real runs: no interpreter has its headers (Python.h): install python3-dev"
}

func keep(env, v string) bool {
	w := os.Getenv(env)
	return w == "" || slices.Contains(strings.Split(w, ","), v)
}

func build(in calibrate.Interpreter) (string, error) {
	buildMu.Lock()
	b := builds[in.Version]
	if b == nil {
		b = &builtExt{}
		builds[in.Version] = b
	}
	buildMu.Unlock()
	b.once.Do(func() { b.dir, b.err = calibrate.Build(in) })
	return b.dir, b.err
}

func repeat() int {
	n, err := strconv.Atoi(os.Getenv("LOGJAM_CALIBRATE_REPEAT"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func scale() float64 {
	s, err := strconv.ParseFloat(os.Getenv("LOGJAM_TIMEOUT_SCALE"), 64)
	if err != nil || s <= 0 {
		return 1
	}
	return s
}

type column struct{ policy, variant string }

func entries() []ginkgo.TableEntry {
	var es []ginkgo.TableEntry
	for _, row := range calibrate.Rows {
		if !keep("LOGJAM_CALIBRATE_ROWS", row.ID) {
			continue
		}
		var cols []column
		for _, v := range row.Variants {
			cols = append(cols, column{variant: v})
		}
		if row.Variants == nil {
			for _, p := range axes.Policies {
				cols = append(cols, column{policy: p})
			}
		}
		bufferings := []string{calibrate.Buffered, calibrate.Unbuffered}
		if row.Variants != nil || row.ID == "T1" {
			bufferings = bufferings[:1] // the sink plays no part / exit-time only
		}
		for _, buf := range bufferings {
			if !keep("LOGJAM_CALIBRATE_BUFFERING", calibrate.BufferingName(buf)) || !keep("LOGJAM_CALIBRATE_PROFILES", calibrate.BufferingName(buf)) { // its old spelling, still read
				continue
			}
			for _, col := range cols {
				if !row.Plays(col.policy, buf) {
					continue
				}
				for _, in := range interps {
					n := name(row.ID, col, buf, in)
					register(n, func(ctx context.Context) any { return playCell(ctx, in, row, col, buf) })
					es = append(es, ginkgo.Entry(n, in, row, col, buf, ginkgo.Label("py"+in.Short())))
				}
			}
		}
	}
	return es
}

func name(row string, col column, buf string, in calibrate.Interpreter) string {
	what := "policy=" + col.policy
	if col.variant != "" {
		what = "variant=" + col.variant
	}
	return fmt.Sprintf("%s real [%s stderr=%s py=%s]", row, what, calibrate.BufferingName(buf), in.Version)
}

var _ = ginkgo.Describe("calibrate", ginkgo.Label("calibrate"), func() {
	ginkgo.DescribeTable("real CPython beside the simulated cell",
		func(ctx ginkgo.SpecContext, in calibrate.Interpreter, row calibrate.Row, col column, buf string) {
			if in.Missing != "" {
				ginkgo.Skip("python " + in.Version + ": " + in.Missing)
			}
			cellName := ginkgo.CurrentSpecReport().LeafNodeText
			p := played(ctx, cellName).(*cellPlay)
			Expect(p.err).NotTo(HaveOccurred(), p.step)
			sim, spec, real, counts, n := p.sim, p.spec, p.real, p.counts, len(p.reals)
			c := report.Cell{ID: row.ID, Name: cellName, Family: family,
				Cell:     scenario.Cell{Scenario: row.ID, Policy: col.policy, Variant: col.variant, Platform: scenario.DefaultPlatform, Python: in.Version, Buffering: buf},
				Expected: real.Observed, Observed: sim.Observed, Ms: sim.Ms + real.Ms,
				Real:  map[string]verdict.Verdict{in.Version: real.Observed},
				Rerun: rerun(cellName),
				Evidence: report.Evidence{
					Reason:  "simulated: " + sim.Reason + " || real: " + real.Reason,
					Cycle:   sim.Cycle,
					Ledger:  sim.Ledger,
					Command: real.Command,
				}}
			if n > 1 {
				ginkgo.AddReportEntry(repeatsEntry, repeated{Cell: cellName, Agree: counts[sim.Observed], N: n,
					Sim: sim.Observed, Counts: countText(counts)}, ginkgo.ReportEntryVisibilityNever)
			}
			agree := real.Observed == sim.Observed
			if !agree {
				if l := calibrate.LimitFor(row.ID, col.policy, buf, in.Version, real.Observed); l != nil {
					c.Limit = l.ID
				}
			}
			if !agree && c.Limit == "" {
				c.Bundle = report.BundleDir(reportsDir(), cellName)
				rb := calibrate.Bundle(real, c)
				sb, _ := sim.Bundle(c, spec, suitekit.Profile, suitekit.Bin)
				if err := report.WriteBundle(c.Bundle+".real", rb); err != nil {
					c.Bundle = "(could not write: " + err.Error() + ")"
				} else if err := report.WriteBundle(c.Bundle+".sim", sb); err != nil {
					c.Bundle = "(could not write: " + err.Error() + ")"
				}
			}
			ginkgo.AddReportEntry(report.EntryName, c, ginkgo.ReportEntryVisibilityNever)
			ginkgo.GinkgoWriter.Printf("simulated %s | real %s | limit %q\n", sim.Observed, real.Observed, c.Limit)
			if !agree && c.Limit == "" {
				ginkgo.Fail(disagreement(c, sim, real))
			}
		},
		entries())
})

// cellPlay is one real cell played: its simulated cell and its real
// runs (LOGJAM_CALIBRATE_REPEAT of them), or the step that failed.
type cellPlay struct {
	sim    *cell.Outcome
	spec   cell.Spec
	reals  []*cell.Outcome
	real   *cell.Outcome // the run reported: a disagreeing one when there is one
	counts map[verdict.Verdict]int
	step   string
	err    error
}

// playCell plays the simulated cell and the real one (repeat() times) of
// row under col and buf on in.
func playCell(ctx context.Context, in calibrate.Interpreter, row calibrate.Row, col column, buf string) *cellPlay {
	p := &cellPlay{counts: map[verdict.Verdict]int{}}
	dir, err := build(in)
	if err != nil {
		p.step, p.err = "building the extension", err
		return p
	}
	spec, err := calibrate.SimSpec(row, col.policy, in.Version, buf)
	if err != nil {
		p.step, p.err = "the simulated cell's spec", err
		return p
	}
	if col.variant != "" {
		spec.Variant, spec.Backend = col.variant, "cuda"
	}
	p.spec = spec
	if p.sim, err = cell.Run(ctx, suitekit.Bin, spec, suitekit.Profile); err != nil {
		p.step, p.err = "running the simulated cell", err
		return p
	}
	for i := 0; i < repeat(); i++ {
		o, err := calibrate.Run(ctx, in, dir, row, col.policy, col.variant, buf, calibrate.Options{Scale: scale()})
		if err != nil {
			p.step, p.err = "running the real cell", err
			return p
		}
		p.reals = append(p.reals, o)
		p.counts[o.Observed]++
		// Keep a disagreeing run's evidence when there is one.
		if p.real == nil || (p.real.Observed == p.sim.Observed && o.Observed != p.sim.Observed) {
			p.real = o
		}
	}
	return p
}

// repeatsEntry carries a repeated cell's agreement (make calibrate-stress).
const repeatsEntry = "calibrate-repeats"

type repeated struct {
	Cell     string
	Agree, N int
	Sim      verdict.Verdict
	Counts   string
}

func countText(counts map[verdict.Verdict]int) string {
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", v, counts[v]))
	}
	return strings.Join(parts, ", ")
}

func rerun(cellName string) string {
	return fmt.Sprintf(`cd "$(go list -m -f '{{.Dir}}')" && ./logjam ginkgo --label-filter calibrate --focus '%s' ./calibrate`,
		strings.ReplaceAll(regexpQuote(cellName), "'", `'\''`))
}

func regexpQuote(s string) string {
	return strings.NewReplacer("[", `\[`, "]", `\]`, ".", `\.`, "(", `\(`, ")", `\)`, "+", `\+`, "*", `\*`).Replace(s)
}

func reportsDir() string {
	if d := os.Getenv("LOGJAM_REPORTS"); d != "" {
		return d
	}
	return filepath.Join(suitekit.Root, "reports")
}

// disagreement is the failure: both evidences.
func disagreement(c report.Cell, sim, real *cell.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cell %s: simulated %s, real CPython %s %s (no named limit accepts it)\n", c.Name, sim.Observed, c.Python, real.Observed)
	for _, side := range []struct {
		what string
		o    *cell.Outcome
		dir  string
	}{{"simulated", sim, c.Bundle + ".sim"}, {"real", real, c.Bundle + ".real"}} {
		ev, _ := json.Marshal(side.o.Ledger)
		fmt.Fprintf(&b, "%s: %s\n  reason: %s\n  ledger: %s\n  command: %s\n  evidence bundle: %s\n", side.what, side.o.Observed, side.o.Reason, ev, side.o.Command, side.dir)
	}
	fmt.Fprintf(&b, "rerun this cell: %s\n", c.Rerun)
	return b.String()
}

// The report: every calibrated cell (the matrix with its real column),
// the limits, the rows not reproduced here and why, the versions, the
// agreement per version; written as a matrix to reports/calibration.json.
var _ = ginkgo.ReportAfterSuite("calibration report", func(r types.Report) {
	var m report.Matrix
	var repeats []repeated
	for _, sr := range r.SpecReports {
		for _, e := range sr.ReportEntries {
			switch e.Name {
			case report.EntryName:
				var c report.Cell
				if entryValue(e.Value, &c) {
					m = append(m, c)
				}
			case repeatsEntry:
				var rp repeated
				if entryValue(e.Value, &rp) {
					repeats = append(repeats, rp)
				}
			}
		}
	}
	if len(m) == 0 {
		return
	}
	m.Sort()
	path := os.Getenv("LOGJAM_CALIBRATE_REPORT")
	if path == "" {
		path = filepath.Join(reportsDir(), "calibration.json")
	}
	var b strings.Builder
	report.RenderText(&b, m)
	fmt.Fprintf(&b, "\ncalibrate: interpreters %s; %.0f s wall\n", versions(), r.RunTime.Seconds())
	type tally struct{ agree, limit, disagree int }
	per := map[string]*tally{}
	for _, c := range m {
		t := per[c.Python]
		if t == nil {
			t = &tally{}
			per[c.Python] = t
		}
		switch {
		case c.Observed == c.Expected:
			t.agree++
		case c.Limit != "":
			t.limit++
		default:
			t.disagree++
		}
	}
	for _, v := range slices.Sorted(maps.Keys(per)) {
		t := per[v]
		fmt.Fprintf(&b, "  python %s: %d real cells, %d agree with the simulated, %d differ under a named limit, %d disagree\n", v, t.agree+t.limit+t.disagree, t.agree, t.limit, t.disagree)
	}
	fmt.Fprintln(&b, "named limits of the model (calibrate/limits.go):")
	for _, l := range calibrate.Limits {
		fmt.Fprintf(&b, "  %s: %s\n", l.ID, l.Reason)
	}
	fmt.Fprintln(&b, "rows not reproduced here:")
	for _, n := range calibrate.NotReproduced {
		fmt.Fprintf(&b, "  %s: %s\n", n.Rows, n.Why)
	}
	for _, row := range calibrate.Rows {
		for _, l := range row.LeftOut {
			fmt.Fprintf(&b, "  %s under %s, %s: left out: %s\n", row.ID, l.Policy, calibrate.BufferingName(l.Buffering), l.Why)
		}
	}
	if len(repeats) > 0 {
		slices.SortFunc(repeats, func(a, b repeated) int { return strings.Compare(a.Cell, b.Cell) })
		agree, runs := 0, 0
		fmt.Fprintln(&b, "repeats: each real run against the simulated verdict:")
		for _, rp := range repeats {
			agree, runs = agree+rp.Agree, runs+rp.N
			fmt.Fprintf(&b, "  %s: %d/%d agree with the simulated %s (%s)\n", rp.Cell, rp.Agree, rp.N, rp.Sim, rp.Counts)
		}
		fmt.Fprintf(&b, "agreement rate: %d/%d real runs (%.1f%%) over %d cells\n", agree, runs, 100*float64(agree)/float64(runs), len(repeats))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fmt.Fprintf(&b, "calibrate: could not make %s: %v\n", filepath.Dir(path), err)
	} else if err := report.WriteMatrix(path, m); err != nil {
		fmt.Fprintf(&b, "calibrate: could not write %s: %v\n", path, err)
	} else {
		fmt.Fprintf(&b, "calibrate: matrix with its real column written to %s\n", path)
	}
	fmt.Print(b.String())
	_ = os.WriteFile(strings.TrimSuffix(path, ".json")+".txt", []byte(b.String()), 0o644)
})

// entryValue is a report entry's value: the value itself in this process,
// its JSON when it came from another parallel process.
func entryValue[T any](v types.ReportEntryValue, into *T) bool {
	if raw, ok := v.GetRawValue().(T); ok {
		*into = raw
		return true
	}
	return v.AsJSON != "" && json.Unmarshal([]byte(v.AsJSON), into) == nil
}

func versions() string {
	var vs []string
	for _, in := range interps {
		s := in.Version + " (" + in.Path + ")"
		buildMu.Lock()
		b := builds[in.Version]
		buildMu.Unlock()
		if b != nil {
			if d, _ := build(in); d != "" { // done: every spec has played
				s += " [pystderr: " + calibrate.Pythonbuf(d) + " pythonbuf]"
			}
		}
		if in.Missing != "" {
			s += " [" + in.Missing + "]"
		}
		vs = append(vs, s)
	}
	return strings.Join(vs, ", ")
}
