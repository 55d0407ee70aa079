package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"logjam/harness/report"
	"logjam/internal/config"
	"logjam/internal/cpuslot"
	"logjam/internal/shard"
)

const chaosUsage = "usage: logjam chaos [-profile P] [-focus REGEXP] [-label-filter EXPR] [-shard K/N] [-repeat N] [-procs N] [-slots N] [-out DIR] [-run-id ID] [-keep-bundles] [-rerun-failed] [-v] [FAMILY...]"

// KeepBundlesEnv set to 1 in a family's environment (logjam chaos
// -keep-bundles) asks suitekit for an evidence bundle of every cell, as
// expected or not: an expected HANG can then be replayed without editing
// its expectation.
const KeepBundlesEnv = "LOGJAM_KEEP_BUNDLES"

// SpecReportEnv names the file a spec process writes its Ginkgo JSON
// report to, without the specs another process of its family claimed
// (suitekit; mergeReports joins them).
const SpecReportEnv = "LOGJAM_SPEC_REPORT"

// chaosOptions are logjam chaos's flags, checked before anything runs.
type chaosOptions struct {
	prof config.Profile
	root string
	// only: the families named on the command line (none: every family).
	only  []string
	out   string
	focus string
	// labels: a Ginkgo label filter (-label-filter), checked by Ginkgo's
	// own parser; "" for none.
	labels string
	shard  shard.Shard
	procs  int // per family; 0: fitted (fittedProcs)
	slots  int
	picked bool // the seed was picked here, not by the profile
	// pointer is the reports/ link (latest, latest-focus) that moves to
	// this run's own folder when it ends; "" with -out.
	pointer string
	runID   string
	verbose bool // a line per cell
	keep    bool // a bundle of every cell (-keep-bundles)
	// rerun: -rerun-failed's line saying what it picked ("": not given).
	rerun string
}

// chaosFlags are logjam chaos's flags as given, before they are checked.
type chaosFlags struct {
	profile, focus, labels, shard, out, runID *string
	procs, slots, repeat                      *int
	verbose, keep, rerunFailed                *bool
}

func newChaosFlags() (*flag.FlagSet, chaosFlags) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, chaosFlags{
		profile:     fs.String("profile", envOr("LOGJAM_PROFILE", "local"), "run profile from ginkgo.yml (local, nightly, focus)"),
		focus:       fs.String("focus", "", "run only the cells whose names match this regular expression (logjam list shows the names)"),
		labels:      fs.String("label-filter", "", "run only the specs whose labels match this Ginkgo label filter (e.g. 'negative-control', '!random'; logjam list -label-filter shows what it selects)"),
		shard:       fs.String("shard", "", "run only shard K of N (K/N); give every shard the same -run-id and LOGJAM_SEED for report merge"),
		procs:       fs.Int("procs", 0, "spec processes per family (0: fitted to the cores and the family in fast mode, 12 in strict)"),
		slots:       fs.Int("slots", slotsPerCore*runtime.NumCPU(), "children computing at once, over all families"),
		out:         fs.String("out", "", "reports directory (default: reports/ at the module root)"),
		repeat:      fs.Int("repeat", 0, "runs of each cell (0: the profile's repeat)"),
		runID:       fs.String("run-id", os.Getenv("LOGJAM_RUN_ID"), "the run the shards belong to (report merge joins one run's shards; default: profile, seed and commit)"),
		keep:        fs.Bool("keep-bundles", false, "write an evidence bundle for every cell, as expected or not (default: only for a cell not as expected), so that an expected HANG can be replayed"),
		rerunFailed: fs.Bool("rerun-failed", false, "run again only the cells the last run (reports/latest or reports/latest-focus, whichever is newer) had not as expected, with its profile and seed unless -profile or LOGJAM_SEED says otherwise; no -focus, -shard, -out or FAMILY with it"),
		verbose:     fs.Bool("v", false, "a line per cell as it ends (default: on a terminal a status line updated in place, elsewhere a count every 5 s; a cell not as expected always gets its line)"),
	}
}

func parseChaos(args []string) (chaosOptions, error) {
	fs, f := newChaosFlags()
	profile, focus, sh, procs, slots, out, repeat, runID := f.profile, f.focus, f.shard, f.procs, f.slots, f.out, f.repeat, f.runID
	var o chaosOptions
	fams, err := parseInterspersed(fs, args)
	if err != nil {
		return o, err
	}
	if err := checkFocus(*focus); err != nil {
		return o, err
	}
	if err := checkLabelFilter(*f.labels); err != nil {
		return o, err
	}
	o.labels = *f.labels
	if err := checkAmbientFailpoints(); err != nil {
		return o, err
	}
	if *procs < 0 || *slots < 1 || *repeat < 0 {
		return o, errors.New("-procs and -repeat must be at least 0, -slots at least 1")
	}
	wd, _ := os.Getwd()
	cfgPath, err := config.Find(wd)
	if err != nil {
		return o, err
	}
	if o.prof, err = config.Load(cfgPath, *profile); err != nil {
		return o, err
	}
	if *repeat > 0 {
		o.prof.Repeat = *repeat
	}
	if _, err := regexp.Compile(*focus); err != nil {
		return o, fmt.Errorf("-focus: %v", err)
	}
	if *sh != "" {
		if o.shard, err = shard.Parse(*sh); err != nil {
			return o, err
		}
	}
	o.root, o.focus, o.procs, o.slots, o.runID, o.verbose, o.keep = filepath.Dir(cfgPath), *focus, *procs, *slots, *runID, *f.verbose, *f.keep
	if len(fams) > 0 {
		all, err := families(o.root)
		if err != nil {
			return o, err
		}
		for _, fam := range fams {
			if !slices.Contains(all, fam) {
				return o, fmt.Errorf("no family %q (accepted: %s)", fam, strings.Join(all, ", "))
			}
			if !slices.Contains(o.only, fam) {
				o.only = append(o.only, fam)
			}
		}
	}
	if *f.rerunFailed {
		if err := o.pickFailed(fs, len(fams) > 0, *out, *repeat); err != nil {
			return o, err
		}
	}
	if *out != "" {
		o.out, _ = filepath.Abs(*out)
	} else {
		o.pointer = pointerFor(o.focus+o.labels, o.shard)
		if len(o.only) > 0 {
			o.pointer = LatestFocusPointer // a part of the matrix, as a focus is
		}
	}
	if o.procs == 0 && o.prof.Mode == "strict" {
		o.procs = 12 // every deadline-waiting cell of a family waits at once
	}
	if o.prof.Seed == 0 {
		o.prof.Seed, o.picked = time.Now().Unix()%1_000_000, true
	}
	return o, nil
}

// parseInterspersed parses args with fs, flags before, between and after
// the positional arguments (logjam chaos deadlock -focus D1 as well as
// logjam chaos -focus D1 deadlock), and returns the positional ones; after
// "--" every argument is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		i := len(args) - fs.NArg()
		if i > 0 && args[i-1] == "--" {
			return append(pos, fs.Args()...), nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// slotsPerCore is -slots' default per core. A child holds its slot from
// its start to its end, but computes for about a fifth of that: the rest
// it waits for its parent (a stalled or paused reader, a signal at a mark,
// a room check's answer) or for its own barriers. Two a core left the
// cores idle while the slots' children waited (a warm matrix on two cores:
// 7.0-9.0 s wall at 4 slots, 4.4-4.7 s at 12, the same CPU, load 6-10);
// six a core is also random search's -j.
const slotsPerCore = 6

// procsPerCore is how many spec processes a family gets per core in fast
// mode when -procs is not given. A family's specs are shared only among
// its own processes (claim), so a family gets processes as its specs take
// time, and no more: every process is a Go runtime and a test binary on
// the same cores, and skips every spec another process claimed. Where the
// time goes (serial spec time, Ginkgo's RunTime summed, two cores at load
// 7): random 11.5 s (120 specs; its longest, a shrunk schedule, 2.2 s),
// signals 3.6 s (72 specs), pipes 3.0 s (P3's terminal pauses 300 ms),
// harness 2.1 s (H6 waits its 2 s deadline, and starts first), fatal 1.6
// s, every other family under 0.8 s; on a loaded machine every spec's
// start costs more, so daemon's 84 get a second process too. Six for
// random, or two for fatal, measured no faster (bd2947c's commit body).
var procsPerCore = map[string]float64{"random": 4, "pipes": 1, "signals": 1, "daemon": 1}

// defaultProcsPerCore is every other family's share.
const defaultProcsPerCore = 0.5

// fittedProcs is a family's spec processes on this many cores: at least 1.
func fittedProcs(fam string, cores int) int {
	per, ok := procsPerCore[fam]
	if !ok {
		per = defaultProcsPerCore
	}
	return max(1, int(math.Round(per*float64(cores))))
}

// procsFor is the family's spec processes: -procs (or strict mode's) when
// set, else fitted to runtime.NumCPU().
func (o chaosOptions) procsFor(fam string) int {
	if o.procs > 0 {
		return o.procs
	}
	return fittedProcs(fam, runtime.NumCPU())
}

// procsLine says how many spec processes each family gets.
func (o chaosOptions) procsLine(fams []string) string {
	if o.procs > 0 {
		return fmt.Sprintf("%d procs per family", o.procs)
	}
	by := map[int][]string{}
	var counts []int
	for _, f := range fams {
		n := o.procsFor(f)
		if by[n] == nil {
			counts = append(counts, n)
		}
		by[n] = append(by[n], f)
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	var parts []string
	for _, n := range counts {
		if len(by[n]) > 3 {
			parts = append(parts, fmt.Sprintf("%d each for the %d others", n, len(by[n])))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, strings.Join(by[n], " ")))
	}
	return fmt.Sprintf("procs fitted to %d cores (%s)", runtime.NumCPU(), strings.Join(parts, ", "))
}

// families are the suite packages under suites/ (each has a *_suite_test.go).
func families(root string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(root, "suites", "*", "*_suite_test.go"))
	if err != nil || len(m) == 0 {
		return nil, fmt.Errorf("no suites under %s", filepath.Join(root, "suites"))
	}
	var fams []string
	for _, p := range m {
		fams = append(fams, filepath.Base(filepath.Dir(p)))
	}
	slices.Sort(fams)
	return slices.Compact(fams), nil
}

// familyRun is one family's repeats as they finished: its cells and the
// rows of its specs that failed outside any cell.
type familyRun struct {
	name    string
	cells   []report.Cell
	seconds float64
	// plan and noCell are what its Ginkgo reports say of its specs
	// (report.PlanOf): every spec of the split, and this shard's that
	// passed without a row.
	plan, noCell []report.PlannedSpec
}

// runChaos builds every suite and the child once, runs the families at
// the same time (each with -procs spec processes, the children sharing
// -slots CPU slots), each repeat of the profile after the other, prints a
// line per family as it finishes, and writes the reports.
func runChaos(args []string, w io.Writer) int {
	o, err := parseChaos(args)
	if errors.Is(err, flag.ErrHelp) {
		fs, _ := newChaosFlags()
		subUsage(w, chaosUsage+"\n\nFAMILY...: run only these families (logjam list names them); -focus narrows them further.\n\nflags:", fs)
		fmt.Fprintln(w, "\nenvironment: LOGJAM_PROFILE (local, nightly, focus), LOGJAM_TIMEOUT_SCALE, LOGJAM_SEED.\nrandom fault schedules instead of the suites: logjam chaos -random N (its flags below)")
		return 0
	}
	if errors.Is(err, errNothingToRerun) {
		fmt.Fprintf(w, "logjam: -rerun-failed: %v\n", err)
		return 0
	}
	if err != nil {
		return fail("chaos: %v (%s)", err, chaosUsage)
	}
	if o.rerun != "" {
		fmt.Fprintln(w, o.rerun)
	}
	emptyFocus := func() int {
		if o.rerun != "" {
			return fail("chaos: -rerun-failed: no cell of this tree has the name of a cell the last run had not as expected (renamed or removed since)")
		}
		if o.labels != "" {
			sel := "-label-filter " + strconv.Quote(o.labels)
			if o.focus != "" {
				sel = "-focus " + strconv.Quote(o.focus) + " " + sel
			}
			return fail("chaos: %s selects no spec in any family (logjam list with the same flags shows what they select)", sel)
		}
		return fail("chaos: -focus %s selects no spec in any family (logjam list -focus REGEXP shows what a focus selects)", strconv.Quote(o.focus))
	}
	if o.pointer == "" {
		// -out names the user's own folder: it stays, whatever ran.
		if code := chaosRun(o, w); code != errEmptyFocus {
			return code
		}
		return emptyFocus()
	}
	reports := filepath.Join(o.root, "reports")
	name, focus := o.prof.Name, o.focus
	if o.labels != "" {
		focus += " " + o.labels
	}
	if o.rerun != "" {
		name, focus = name+"-rerun-failed", "" // the focus is every failing name
	}
	if o.out, err = newRunFolder(reports, time.Now(), name, focus, o.shard); err != nil {
		return fail("reports directory: %v", err)
	}
	code := chaosRun(o, w)
	if code == errEmptyFocus {
		// Nothing ran: the run folder goes, and no pointer moves to it.
		_ = os.RemoveAll(o.out)
		return emptyFocus()
	}
	publishRun(reports, o.out, o.pointer, code, w)
	return code
}

// selectedFamilies are the families of fams in which the run's focus and
// label filter select a spec, in any shard (a dry run of each, at once).
func selectedFamilies(o chaosOptions, fams []string, bins map[string]string, env []string, st *stopper) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), planWithin)
	defer cancel()
	all := o
	all.shard = shard.Shard{} // the whole run: a focus selects in some shard
	found := make([]bool, len(fams))
	var g errgroup.Group
	for i, fam := range fams {
		g.Go(func() error {
			specs, err := plannedSpecs(ctx, all, fam, bins[fam], env, st)
			found[i] = len(specs) > 0
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var sel []string
	for i, fam := range fams {
		if found[i] {
			sel = append(sel, fam)
		}
	}
	return sel, nil
}

// selects: a focus or a label filter narrows the run.
func (o chaosOptions) selects() bool { return o.focus != "" || o.labels != "" }

// errEmptyFocus is chaosRun's answer when a focus selected no spec at all
// (as Ginkgo's --fail-on-empty): bad input, exit status 2, nothing kept.
// TestAFocusThatSelectsNothingIsBadInput pins it.
const errEmptyFocus = -2

// chaosRun is one run into o.out.
func chaosRun(o chaosOptions, w io.Writer) int {
	fams, err := families(o.root)
	if err != nil {
		return fail("%v", err)
	}
	if len(o.only) > 0 {
		fams = o.only
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fail("reports directory: %v", err)
	}
	for _, d := range []string{report.EvidenceDir, "ginkgo", "logs"} {
		_ = os.RemoveAll(filepath.Join(o.out, d))
		if err := os.MkdirAll(filepath.Join(o.out, d), 0o755); err != nil {
			return fail("reports directory: %v", err)
		}
	}
	// The build and each family's Ginkgo run in their own process groups;
	// a Ctrl-C stops the build, or is passed on once to each family, so
	// that they stop their specs, kill their children and write what they
	// have (interrupt.go).
	buildCtx, cancelBuild := context.WithCancel(context.Background())
	defer cancelBuild()
	st := newStopper(cancelBuild, os.Stderr)
	defer st.close()

	started := time.Now()
	seedNote := ""
	if o.picked {
		seedNote = " (picked)"
	}
	fmt.Fprintf(w, "logjam: profile %s (deadline %s x %.2g, %s mode, %d repeat(s)), seed %d%s, shard %s, %s, %d CPU slots\n",
		o.prof.Name, o.prof.Deadline, o.prof.TimeoutScale, o.prof.Mode, o.prof.Repeat, o.prof.Seed, seedNote, o.shard, o.procsLine(fams), o.slots)

	fmt.Fprintf(w, "logjam: building %d suites (%s) and the child; cached per state of the sources, the first build takes a minute or more\n", len(fams), strings.Join(fams, ", "))
	stopTicker := buildTicker(w, "the suites and the child")
	defer stopTicker()
	// Every family's cells need the child. A cached entry has every binary
	// at once; a build hands out each as its link ends, and a family starts
	// then (build.go), the build's end said among the families' lines.
	build := startBuild(buildCtx, o.root, fams)
	defer build.close()
	simrt := build.wait("simrt", nil)
	early := build.announcedEarly("simrt")
	if !early {
		stopTicker()
		cached, err := build.result()
		if err != nil && st.Signal() != nil {
			return finish(o, fams, nil, nil, nil, nil, st, started, w)
		}
		if err != nil {
			return finish(o, fams, nil, nil, buildRows(err), nil, st, started, w)
		}
		built := "built"
		if cached {
			built = "found built"
		}
		fmt.Fprintf(w, "logjam: %s %d suites and the child in %.1f s\n", built, len(fams), time.Since(started).Seconds())
	}
	slots, err := cpuslot.Serve(o.slots)
	if err != nil {
		return fail("CPU slots: %v", err)
	}
	defer slots.Close()
	env := append(os.Environ(), "LOGJAM_PROFILE="+o.prof.Name, fmt.Sprintf("LOGJAM_SEED=%d", o.prof.Seed),
		"LOGJAM_SIMRT="+simrt, "LOGJAM_REPORTS="+o.out, cpuslot.Env+"="+slots.Addr, shard.Env+"=", DieWithParentEnv+"=1")
	if !o.shard.All() {
		env = append(env, shard.Env+"="+o.shard.String())
	}

	if o.selects() {
		// What the focus or label filter selects, read from the built
		// suites by Ginkgo's dry run before any family runs: nothing is
		// bad input at once, and a family it selects nothing in is not run.
		build.result() // the dry runs need every suite: a build still going is waited for
		sel, err := selectedFamilies(o, fams, build.bins(), env, st)
		if st.Signal() != nil {
			return finish(o, fams, nil, nil, nil, nil, st, started, w)
		}
		if err == nil && len(sel) == 0 {
			return errEmptyFocus
		}
		if err == nil {
			fams = sel
		}
	}
	if early {
		fmt.Fprintf(w, "logjam: running each of the %d families as soon as its suite is built; a line as each finishes (Ginkgo's output: %s)\n", len(fams), filepath.Join(o.out, "logs"))
	} else {
		fmt.Fprintf(w, "logjam: running the %d families at once; a line as each finishes (Ginkgo's output: %s)\n", len(fams), filepath.Join(o.out, "logs"))
	}
	// Each suite process appends a line per spec that ends to a file in
	// logs/; followed here, it is the per-cell progress (progress.go).
	progressPath := filepath.Join(o.out, "logs", "progress.jsonl")
	env = append(env, ProgressEnv+"="+progressPath)
	if o.keep {
		env = append(env, KeepBundlesEnv+"=1")
	}
	prog := newCellProgress(w, o.verbose, o.prof.Repeat)
	stopFollowing := make(chan struct{})
	followed := followProgress(progressPath, prog, stopFollowing)
	if early {
		go func() {
			if _, err := build.result(); err == nil {
				stopTicker()
				prog.println(fmt.Sprintf("logjam: built %d suites and the child in %.1f s", len(fams), time.Since(started).Seconds()))
			}
		}()
	}
	var wg sync.WaitGroup
	runs := make([]familyRun, len(fams))
	for i, fam := range fams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i].name = fam
			bin := build.wait(fam, st.Interrupted())
			if bin == "" {
				return // not built (a row of the build's) or interrupted first (NOTRUN rows)
			}
			stopTicker() // the cells' progress takes over
			fr := runFamily(o, fam, bin, env, st)
			runs[i] = fr
			// A focus prints only the families it selected something in.
			if !o.selects() || len(fr.cells) > 0 {
				prog.println(familyLine(report.Styled(w), fr))
			}
		}()
	}
	wg.Wait()
	close(stopFollowing)
	<-followed
	prog.end()

	var cells []report.Cell
	for _, fr := range runs {
		cells = append(cells, fr.cells...)
	}
	if _, err := build.result(); err != nil && st.Signal() == nil {
		cells = append(cells, buildRows(err)...) // the suites that did not build
	}
	if o.selects() && len(cells) == 0 && prog.selected() == 0 && st.Signal() == nil {
		return errEmptyFocus
	}
	return finish(o, fams, build.bins(), env, cells, runs, st, started, w)
}

// buildRows are the rows of a build that failed: one per suite the
// compiler named ("# logjam/suites/<family>"), else one for the build.
func buildRows(err error) []report.Cell {
	var rows []report.Cell
	seen := map[string]bool{}
	for _, m := range buildFailed.FindAllStringSubmatch(err.Error(), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			rows = append(rows, report.SpecRow(m[1], "build", m[1]+" suite (build)", "the suite did not build: "+err.Error()))
		}
	}
	if len(rows) == 0 {
		rows = append(rows, report.SpecRow("build", "build", "the suites and the child (build)", "the build failed: "+err.Error()))
	}
	return rows
}

var buildFailed = regexp.MustCompile(`(?m)^# logjam/suites/([a-z0-9_]+)`)

// finish writes the reports and prints the matrix; after a Ctrl-C, with a
// NOTRUN row for each cell the run never started, and exit status 130.
func finish(o chaosOptions, fams []string, bins map[string]string, env []string, cells []report.Cell, runs []familyRun, st *stopper, started time.Time, w io.Writer) int {
	if st.Signal() != nil {
		cells = append(cells, notRunCells(o, fams, bins, env, cells, st)...)
	}
	st.close()
	commit := commitOf(o.root)
	id := o.runID
	if id == "" {
		id = fmt.Sprintf("%s-seed%d-%s", o.prof.Name, o.prof.Seed, commit)
	}
	run := report.Run{ID: id, Profile: o.prof.Name, Mode: o.prof.Mode, Deadline: o.prof.ScaledDeadline().String(), Seed: o.prof.Seed,
		Repeat: o.prof.Repeat, Focus: o.focus, Shards: []string{o.shard.String()}, Go: runtime.Version(), Ginkgo: types.VERSION,
		Commit: commit, Started: started, Seconds: time.Since(started).Seconds()}
	for _, fr := range runs {
		run.Plan = append(run.Plan, fr.plan...)
		run.NoCell = append(run.NoCell, fr.noCell...)
	}
	run.Plan, run.NoCell = report.Unique(run.Plan), report.Unique(run.NoCell)
	if err := report.WriteAll(o.out, run, cells); err != nil {
		return fail("%v", err)
	}
	bad := printRows(report.Group(cells), w)
	fmt.Fprintf(w, "logjam: %.1f s; reports in %s (%s, %s, %s, %s)\n", run.Seconds, o.out,
		report.MatrixFile, report.JUnitFile, report.HTMLFile, report.MarkdownFile)
	if sig := st.Signal(); sig != nil {
		fmt.Fprintf(w, "logjam: %s: the cells that ran are in the matrix, those cut short INTERRUPTED, the others NOTRUN\n", signalName(sig))
		return exitStatusFor(sig)
	}
	if bad > 0 {
		return 1
	}
	return 0
}

// repeatOutcome is every row one repeat of a family left: its cells and
// failed specs from Ginkgo's JSON report, and a row of its own when Ginkgo
// could not run, left no report, or failed although no spec did (its exit
// status is never dropped). An interrupted run's status is the signal's.
func repeatOutcome(fam string, r int, js, logPath string, runErr error, interrupted bool) []report.Cell {
	cells, err := report.FromGinkgo(js, fam)
	for i := range cells {
		cells[i].Repeat = r
	}
	name := fmt.Sprintf("%s suite (repeat %d)", fam, r)
	row := func(msg string) []report.Cell {
		c := report.SpecRow(fam, "suite", name, msg+"; its log: "+logPath)
		c.Repeat = r
		return append(cells, c)
	}
	var ee *exec.ExitError
	switch {
	case runErr != nil && !errors.As(runErr, &ee):
		return row(fmt.Sprintf("ginkgo did not run: %v", runErr))
	case err != nil && interrupted:
		return cells // its cells are NOTRUN rows
	case err != nil:
		return row(fmt.Sprintf("left no report (%v)", err))
	case runErr != nil && cells.Unexpected() == 0 && !interrupted:
		return row(fmt.Sprintf("ginkgo exited %d, but no spec in its report failed", ee.ExitCode()))
	}
	return cells
}

// familyLine is one family's line: cells, as expected, not, seconds;
// colour only when colour is set (report.Styled).
func familyLine(colour bool, fr familyRun) string {
	fams := report.Group(fr.cells)
	t := report.Count(fams)
	not := fmt.Sprintf("%d not", t.Not)
	if t.Flaky > 0 {
		not += fmt.Sprintf(" (%d flaky)", t.Flaky)
	}
	if colour {
		c := "\x1b[32m"
		if t.Not > 0 {
			c = "\x1b[31m"
		}
		not = c + not + "\x1b[0m"
	}
	return fmt.Sprintf("logjam: %-9s %3d cells, %3d as expected, %s, %.1f s", fr.name, t.Cells, t.AsExpected, not, fr.seconds)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func commitOf(root string) string {
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// printRows prints the text matrix (a FLAKY cell with every repeat's
// verdict), its legend and the summary of each cell not as expected, in
// colour on a terminal unless NO_COLOR is set; it returns how many.
func printRows(fams []report.Family, w io.Writer) int {
	return report.RenderStyledText(w, report.Collapse(fams), report.Styled(w))
}
