// Package suitekit is what every chaos suite shares: the profile from
// ginkgo.yml, the child binary built once per suite process, the failpoint
// probe, cell entries named and labelled alike, and the check that runs a
// cell, reports it and fails with its evidence and rerun command.
package suitekit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"logjam/failpoints"
	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/harness/runner"
	"logjam/internal/axes"
	"logjam/internal/claim"
	"logjam/internal/config"
	"logjam/internal/testkit"
	"logjam/scenario"
	"logjam/verdict"
)

var (
	// Bin is the simrt binary, built once per suite process.
	Bin string
	// Profile is the run profile (LOGJAM_PROFILE, from ginkgo.yml).
	Profile config.Profile
	// Root is the module root (where ginkgo.yml is).
	Root string

	family string
)

// suiteGCPercent is the suite processes' GOGC unless GOGC says otherwise.
const suiteGCPercent = 400

// RunSuite loads the profile and runs the suite's specs. A missing or
// malformed ginkgo.yml, a bad LOGJAM_* variable or an ambient GO_FAILPOINTS
// ends the process with status 2 and one line, before any spec or child
// runs.
func RunSuite(t *testing.T, fam string) {
	runner.DieWithParent() // under logjam chaos, nothing outlives the run
	if os.Getenv("GOGC") == "" {
		// A suite process lives seconds and keeps little: the collector
		// at the default 100 was a tenth of its CPU (perf, a warm local
		// matrix). The children it starts keep the default.
		debug.SetGCPercent(suiteGCPercent)
	}
	prof, err := config.FromEnv()
	if err == nil {
		var path string
		wd, _ := os.Getwd()
		path, err = config.Find(wd)
		Root = filepath.Dir(path)
	}
	if err == nil {
		err = checkEnvironment()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "logjam: %v\n", err)
		os.Exit(2)
	}
	Profile, family = prof, fam
	checkCatalogue(fam)
	sendProgress(fam)
	writeSpecReport() // after the suite's other ReportAfterSuite nodes, whose own reports it keeps
	RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, fam+" suite", ginkgo.Label(fam))
}

// BuildChild registers the suite-level setup: simrt is built once (on
// process 1, shared with the others), and the failpoint probe proves that
// injection fires before any cell relies on it.
func BuildChild() bool {
	skipOthers()
	ginkgo.SynchronizedBeforeSuite(func() []byte {
		if bin := os.Getenv("LOGJAM_SIMRT"); bin != "" { // built once by logjam chaos
			return []byte(bin)
		}
		bin, err := testkit.ChildPath() // the go command's cached build, shared: never removed
		Expect(err).NotTo(HaveOccurred(), "building the child binary")
		return []byte(bin)
	}, func(bin []byte) {
		Bin = string(bin)
		probeFailpoints()
	})
	return true
}

// probeFailpoints fails the suite at once if injection does not fire, in
// this process or in a child.
func probeFailpoints() {
	scope := failpoints.NewScope()
	defer scope.Close()
	Expect(scope.Enable(failpoints.Probe, "return(42)")).To(Succeed())
	v, ok := failpoints.Int(failpoints.Probe)
	Expect(ok && v == 42).To(BeTrue(), "failpoint injection does not fire in the suite process")
	out, err := cell.Probe(Bin, 7)
	Expect(err).NotTo(HaveOccurred(), "failpoint injection does not fire in the child: %s", out)
}

// Then is a row's own assertion on its outcome, run once the verdict matched.
type Then func(out *cell.Outcome)

// Verify is what a cell table's body does: Check, then the row's Then. Call
// it from a body written in the suite file, so a failure points there.
func Verify(ctx ginkgo.SpecContext, spec cell.Spec, expected verdict.Verdict, then Then) {
	ginkgo.GinkgoHelper()
	out := Check(ctx, spec, expected)
	if then != nil {
		then(out)
	}
}

// Cell builds a matrix cell named by scenario.Cell.Name, labelled with its
// policy and negative-control when the expected verdict is not OK (the
// family label is the suite's). The table's body receives (spec, expected,
// then); its code location is the caller's line.
func Cell(spec cell.Spec, expected verdict.Verdict, decorations ...any) ginkgo.TableEntry {
	return entry(2, spec, expected, nil, decorations...)
}

// CellThen is Cell with the cell's own assertion.
func CellThen(spec cell.Spec, expected verdict.Verdict, then Then, decorations ...any) ginkgo.TableEntry {
	return entry(2, spec, expected, then, decorations...)
}

// entry is Cell with the suite file's line skip frames up the stack. A
// scenario the catalogue does not know, or a word that is no verdict, stops
// the suite before any spec runs.
func entry(skip int, spec cell.Spec, expected verdict.Verdict, then Then, decorations ...any) ginkgo.TableEntry {
	if _, err := scenario.Lookup(spec.Scenario); err != nil {
		panic(fmt.Sprintf("suitekit: %v", err))
	}
	if !verdict.Known(expected) {
		panic(fmt.Sprintf("suitekit: %s: %q is not a verdict", spec.Scenario, expected))
	}
	spec.Cell = spec.Cell.WithDefaults()
	var labels ginkgo.Labels
	if spec.Policy != "" {
		labels = append(labels, spec.Policy)
	}
	if expected != verdict.OK {
		labels = append(labels, "negative-control")
	}
	// A label set (Ginkgo's key:value): --label-filter 'expect: containsAny {HANG}'
	// selects the cells expected to hang, and logjam list -expected reads
	// it from a dry run (docs/SCENARIOS.md's tables are checked against it).
	labels = append(labels, verdict.Label(expected))
	args := append([]any{types.NewCodeLocation(skip), labels, spec, expected, then}, decorations...)
	if _, ok := startsFirst[spec.Scenario]; ok {
		args = append(args, ginkgo.SpecPriority(1))
	}
	return ginkgo.Entry(spec.Name(spec.Failpoints), args...)
}

// startsFirst are the scenarios whose cells wait longest by design, and
// why: they start before the others of their family (SpecPriority; in
// fast mode logjam chaos orders every spec on its own, --randomize-all),
// so that a family ends with its short cells, not with one that waits.
var startsFirst = map[string]string{
	"P3": "the terminal pauses 300 ms, each cell about 0.3 s",
}

// Check runs one cell and requires observed == expected. It attaches the
// cell to the Ginkgo report, and on a mismatch leaves an evidence bundle
// under reports/evidence and fails with the evidence and the command that
// reruns exactly this cell. A failure points at the caller's line.
func Check(ctx ginkgo.SpecContext, spec cell.Spec, expected verdict.Verdict) *cell.Outcome {
	ginkgo.GinkgoHelper()
	return CheckAs(ctx, spec.Scenario, spec, expected)
}

// CheckAs is Check for a cell whose matrix row is not its scenario's id
// (a random schedule found by search, played by scenario R).
func CheckAs(ctx ginkgo.SpecContext, id string, spec cell.Spec, expected verdict.Verdict) *cell.Outcome {
	ginkgo.GinkgoHelper()
	spec.Cell = spec.Cell.WithDefaults()
	if spec.Platform == "" { // the harness's own children run here too
		spec.Platform = scenario.DefaultPlatform
	}
	out, err := cell.Run(ctx, Bin, spec, Profile)
	if err != nil {
		out = cell.Errored(spec, err) // a row of its own, never a vanished cell
	}
	sr := ginkgo.CurrentSpecReport()
	name := sr.LeafNodeText
	c := report.Cell{ID: id, Name: name, Family: family, Cell: out.Cell, Entry: entryAt(sr.LeafNodeLocation),
		Failpoints: spec.Failpoints.Env(),
		Expected:   expected, Observed: out.Observed, Ms: out.Ms,
		Rerun:    report.Rerun(family, name, Profile.Name, Profile.Seed, os.Getenv("LOGJAM_TIMEOUT_SCALE")),
		Repeat:   repeat(),
		Evidence: report.Evidence{Reason: out.Reason, Cycle: out.Cycle, Ledger: out.Ledger, Command: out.Command}}
	if !c.AsExpected() || os.Getenv(runner.KeepBundlesEnv) == "1" {
		c.Bundle = report.BundleDir(ReportsDir(), name)
		if c.Repeat > 0 {
			c.Bundle += fmt.Sprintf(".r%d", c.Repeat)
		}
		b, keepErr := out.Bundle(c, spec, Profile, Bin)
		if keepErr != nil {
			c.Evidence.Reason += "; the bundle cannot be replayed: " + keepErr.Error()
		}
		if err := report.WriteBundle(c.Bundle, b); err != nil {
			c.Bundle = "(could not write: " + err.Error() + ")"
		}
		c.Evidence.Command = b.Cell.Evidence.Command
	}
	ginkgo.AddReportEntry(report.EntryName, c, ginkgo.ReportEntryVisibilityNever)
	Expect(out.Observed).To(Equal(c.Expected), func() string { return failure(c, out) })
	return out
}

// entryAt is a spec's location from the module root: for a cell, the line
// of its Entry (Cell and Row give it the caller's line), which Ginkgo
// shows above the failure; the assertion's own line is the table body's,
// shared by every row.
func entryAt(loc types.CodeLocation) string {
	if loc.FileName == "" {
		return ""
	}
	file := loc.FileName
	if rel, err := filepath.Rel(Root, file); err == nil && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	return fmt.Sprintf("%s:%d", file, loc.LineNumber)
}

// failure is a cell's failure message; its first line names the Entry
// (file:line: what a wrong expected verdict is fixed at), as a compiler
// names a line.
func failure(c report.Cell, out *cell.Outcome) string {
	var b strings.Builder
	if c.Entry != "" {
		fmt.Fprintf(&b, "%s: ", c.Entry)
	}
	fmt.Fprintf(&b, "cell %s: expected %s, observed %s\n", c.Name, c.Expected, c.Observed)
	fmt.Fprintf(&b, "reason: %s\n", c.Evidence.Reason)
	if c.Evidence.Cycle != "" {
		fmt.Fprintf(&b, "cycle: %s\n", c.Evidence.Cycle)
	}
	ev, _ := json.MarshalIndent(c.Evidence.Ledger, "", "  ")
	fmt.Fprintf(&b, "ledger: %s\n", ev)
	if out.Result != nil {
		// Its rerun line names the kept binary, not the suite's build,
		// which is gone when the suite ends.
		fmt.Fprintf(&b, "watchdog: %s\n", strings.ReplaceAll(out.Result.Summary(), out.Command, c.Evidence.Command))
	}
	fmt.Fprintf(&b, "evidence bundle: %s\n", c.Bundle)
	fmt.Fprintf(&b, "replay it: cd %s && ./logjam replay '%s'\n", Root, c.Bundle)
	fmt.Fprintf(&b, "rerun this cell: %s\n", c.Rerun)
	return b.String()
}

// Row is one scenario's cells across the six policies: verdicts are the
// expected ones in docs/SCENARIOS.md's column order (axes.Policies). spec
// names the scenario and, if not linux, the platform.
func Row(spec cell.Spec, verdicts ...verdict.Verdict) []ginkgo.TableEntry {
	return row(spec, nil, verdicts)
}

// RowThen is Row with the row's own assertion.
func RowThen(spec cell.Spec, then Then, verdicts ...verdict.Verdict) []ginkgo.TableEntry {
	return row(spec, then, verdicts)
}

func row(spec cell.Spec, then Then, verdicts []verdict.Verdict) []ginkgo.TableEntry {
	if len(verdicts) != len(axes.Policies) {
		panic(fmt.Sprintf("suitekit.Row(%s): %d verdicts for %d policies", spec.Scenario, len(verdicts), len(axes.Policies)))
	}
	var es []ginkgo.TableEntry
	for i, p := range axes.Policies {
		s := spec
		s.Policy = p
		es = append(es, entry(3, s, verdicts[i], then))
	}
	return es
}

// Rows joins rows into one table's entries.
func Rows(rows ...[]ginkgo.TableEntry) []ginkgo.TableEntry {
	var es []ginkgo.TableEntry
	for _, r := range rows {
		es = append(es, r...)
	}
	return es
}

// LinuxOnly skips the container's specs elsewhere, saying what of Linux
// they need. Call it in the container's body.
func LinuxOnly(needs string) {
	ginkgo.BeforeEach(func() {
		if runtime.GOOS != "linux" {
			ginkgo.Skip("needs Linux: " + needs)
		}
	})
}

// sendProgress tells logjam chaos (runner.ProgressEnv) how many specs the
// suite will run, and each spec's cells as it ends: the run's per-cell
// progress. Every process of a family sends the same count (the first
// counts). A spec skipped at run time (another shard's) was counted: it
// is dropped from the count; one another process claimed is the count's
// once, as that process ends it; one the focus left out never was.
func sendProgress(fam string) {
	if os.Getenv(runner.ProgressEnv) == "" {
		return
	}
	ginkgo.ReportBeforeSuite(func(r ginkgo.Report) {
		runner.SendProgress(runner.ProgressEvent{Family: fam, Specs: r.PreRunStats.SpecsThatWillRun})
	})
	ginkgo.ReportAfterEach(func(sr ginkgo.SpecReport) {
		ev := runner.ProgressEvent{Family: fam}
		switch {
		case sr.State == types.SpecStateSkipped && sr.Failure.Message == claim.SkipMessage:
			return // another process of the family runs it, and says so
		case sr.State == types.SpecStateSkipped && sr.Failure.Message != "":
			ev.Dropped = 1
		case sr.State == types.SpecStateSkipped || sr.State == types.SpecStatePending:
			return
		default:
			ev.Spec, ev.Failed = sr.LeafNodeText, sr.State.Is(types.SpecStateFailureStates)
			for _, e := range sr.ReportEntries {
				if c, ok := e.Value.GetRawValue().(report.Cell); ok && e.Name == report.EntryName {
					ev.Cells = append(ev.Cells, runner.CellProgress{Label: c.Row() + " [" + c.Column() + "]",
						Expected: c.Expected, Observed: c.Observed, Matches: c.VerdictMatches()})
				}
			}
		}
		runner.SendProgress(ev)
	})
}
