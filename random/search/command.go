package search

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"logjam/internal/childbin"
	"logjam/internal/config"
	"logjam/internal/scratch"
	"logjam/internal/textout"
	"logjam/scenario/schedule"
)

// randomFlags are logjam chaos's random-schedule flags.
type randomFlags struct {
	runs    int
	seed    uint64
	policy  string
	kind    string
	procs   int
	replay  string
	shrink  int
	replays int
	verbose bool
}

const randomUsage = "usage: logjam chaos -random N [-seed S] [-policy P[,P...]] [-kind sink|lazyinit] [-j N] [-shrink-runs N] [-replays K] [-v] [-profile P] | logjam chaos -replay SCHEDULE"

// IsCommand reports whether logjam chaos's arguments ask for random
// schedules (-random, -replay) rather than the suites.
func IsCommand(args []string) bool {
	for _, a := range args {
		name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		if strings.HasPrefix(a, "-") && (name == "random" || name == "replay") {
			return true
		}
	}
	return false
}

// Usage prints random search's command line and every flag it takes.
func Usage(w io.Writer) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.String("profile", "local", "run profile from ginkgo.yml (its deadline scale and grace)")
	addRandomFlags(fs)
	fmt.Fprintf(w, "%s\n\nlogjam chaos -random / -replay flags:\n", randomUsage)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// addRandomFlags registers them on the chaos flag set.
func addRandomFlags(fs *flag.FlagSet) *randomFlags {
	r := &randomFlags{}
	fs.IntVar(&r.runs, "random", 0, "play N random fault schedules instead of the suites")
	fs.Uint64Var(&r.seed, "seed", 1, "with -random: the first run's seed (run i has seed+i)")
	fs.StringVar(&r.policy, "policy", "", "with -random: only these policies ("+strings.Join(schedule.SinkPolicies, ", ")+") or lazy-init variants ("+strings.Join(schedule.LazyVariants, ", ")+"), comma-separated")
	fs.StringVar(&r.kind, "kind", "", "with -random: only this kind of schedule ("+strings.Join(schedule.Kinds, ", ")+")")
	fs.IntVar(&r.procs, "j", defaultProcs(), "with -random: children at a time (default: six a core)")
	fs.StringVar(&r.replay, "replay", "", "play exactly this schedule (as -random prints it) and print its verdict")
	fs.IntVar(&r.shrink, "shrink-runs", defaultShrinkRuns, "with -random: child runs the shrinking of each failure cause may spend, a run whose forwarder reads a few bytes at a time weighing more (0: no shrinking)")
	fs.BoolVar(&r.verbose, "v", false, "with -random: print each cause's schedules too (base64 replay commands, JSON, a Ginkgo Entry, a simrt line) and its shrink steps")
	fs.IntVar(&r.replays, "replays", 0, "with -random: replay each of the first 100 failures this many times and print the agreement")
	return r
}

// addRandomAliases registers the old spellings of renamed flags, which a
// command line typed or saved before still uses; Usage leaves them out.
func addRandomAliases(fs *flag.FlagSet, r *randomFlags) {
	fs.StringVar(&r.kind, "family", "", "the old spelling of -kind")
}

// defaultShrinkRuns bounds each cause's shrink by default. At 60, -random
// 200 -seed 7 spent 555 shrink runs and proved 32 of its 34 causes
// 1-minimal; at 40, 509 runs and 30 of 34, with the same faults left in
// all (393 -> 120); at 30, 469 and 29 of 34 (docs/RANDOM.md, "Shrinking").
const defaultShrinkRuns = 40

// defaultProcs is six children a core: a child waits for most of its
// time (a stall of 200 or 400 ms, a slow sys.stderr, a room check), and
// leaves its core to another. At three a core, -random 200 -seed 7
// -shrink-runs 0 took 4.2 s on two cores, at six 2.7 s (docs/RANDOM.md,
// "What a search's time goes to"). What is printed does not depend on it
// (TestHuntPrintsTheSameWhateverTheTiming).
func defaultProcs() int { return min(64, 6*runtime.NumCPU()) }

func (r *randomFlags) filter() schedule.Filter {
	f := schedule.Filter{Kind: r.kind}
	if r.policy != "" {
		f.Policies = strings.Split(r.policy, ",")
	}
	return f
}

func (r *randomFlags) active() bool { return r.runs > 0 || r.replay != "" }

// checkRandomFlags refuses bad values before anything runs.
func (r *randomFlags) check(set map[string]bool) error {
	if set["random"] && r.runs <= 0 {
		return fmt.Errorf("-random %d: want a positive number of runs", r.runs)
	}
	if !r.active() {
		for _, n := range []string{"seed", "policy", "kind", "family", "j", "shrink-runs", "replays"} {
			if set[n] {
				return fmt.Errorf("-%s goes with -random", n)
			}
		}
		return nil
	}
	if r.runs > 0 && r.replay != "" {
		return fmt.Errorf("-random and -replay do not go together")
	}
	if err := r.filter().Check(); err != nil {
		return err
	}
	if r.procs < 1 || r.procs > 64 {
		return fmt.Errorf("-j %d (accepted: 1 to 64)", r.procs)
	}
	if r.shrink < 0 {
		return fmt.Errorf("-shrink-runs %d: want 0 or more", r.shrink)
	}
	if r.replays < 0 || r.replays > 100 {
		return fmt.Errorf("-replays %d (accepted: 0 to 100)", r.replays)
	}
	if r.replay != "" {
		if _, err := schedule.Decode(r.replay); err != nil {
			return fmt.Errorf("-replay: %s (accepted: a schedule as logjam chaos -random prints it: its JSON, or the base64 of its JSON)", textout.Terminal(err.Error()))
		}
	}
	return nil
}

// randomChaos runs logjam chaos -random or -replay: it checks every flag,
// builds the child once, plays the schedules and prints the table. It
// exits 1 when a run of logjam or fixed failed (a finding), else 0.
func Command(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	profile := fs.String("profile", envOr("LOGJAM_PROFILE", "local"), "run profile from ginkgo.yml (its deadline scale and grace)")
	r := addRandomFlags(fs)
	addRandomAliases(fs, r)
	if err := fs.Parse(args); err != nil {
		return fail("chaos: %v (%s)", err, randomUsage)
	}
	if fs.NArg() > 0 {
		return fail("chaos: unexpected argument %q (%s)", fs.Arg(0), randomUsage)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := r.check(set); err != nil {
		return fail("chaos: %v (%s)", err, randomUsage)
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
	// The child is the go command's cached build (`go tool -n simrt`, a
	// tool in go.mod): go build -o linked it anew for every search, 1.5 s
	// of CPU before the first run. The go command's scratch is a folder
	// removed at exit; a killed run's is swept by the next one.
	scratch.Sweep(os.TempDir(), "logjam-random")
	scr, err := scratch.New(os.TempDir(), "logjam-random")
	if err != nil {
		return fail("%v", err)
	}
	defer scr.Remove()
	build := childbin.CachedCommand(context.Background(), "GOTMPDIR="+scr.Dir)
	build.Dir, build.Stderr = root, os.Stderr
	path, err := build.Output()
	if err != nil {
		return fail("building the child: %v", err)
	}
	bin := strings.TrimSpace(string(path))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := Runner{Bin: bin, Profile: prof}
	if r.replay != "" {
		s, _ := schedule.Decode(r.replay)
		out, err := run.Run(ctx, s)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(w, "%s: %s (%s)\n", Class(s, out.Observed, out.Cycle), out.Observed, out.Reason)
		if out.Cycle != "" {
			fmt.Fprintf(w, "cycle: %s\n", out.Cycle)
		}
		if n := contractNote(s); n != "" {
			fmt.Fprintln(w, n)
		}
		fmt.Fprintf(w, "child: %s\n", out.Command)
		if out.Observed != "OK" {
			return 1
		}
		return 0
	}
	f := r.filter()
	fmt.Fprintf(w, "logjam chaos -random %d -seed %d", r.runs, r.seed)
	if f.Kind != "" {
		fmt.Fprintf(w, " -kind %s", f.Kind)
	}
	if r.policy != "" {
		fmt.Fprintf(w, " -policy %s", r.policy)
	}
	fmt.Fprintf(w, " (profile %s, %s mode)\n", prof.Name, prof.Mode)
	results, findings, err := run.Hunt(ctx, r.seed, r.runs, r.procs, f, r.shrink)
	if err != nil {
		return fail("%v", err)
	}
	PrintTable(w, results)
	flaky := PrintFailures(w, results, findings, f, r.shrink, r.verbose)
	if r.replays > 0 {
		more, err := run.ReplayAgreement(ctx, w, results, r.replays, 100, r.procs)
		if err != nil {
			return fail("%v", err)
		}
		flaky = append(flaky, more...)
	}
	if PrintFlaky(w, flaky, f) > 0 {
		return 1 // a verdict that depends on timing is a defect, whatever the policy
	}
	for _, res := range results {
		if res.Failed() && IsFinding(res.Schedule) {
			return 1
		}
	}
	return 0
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "logjam: "+format+"\n", args...)
	return 2
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// contractNote is the line a replay adds for a schedule random search no
// longer draws (an older seed's, or one written by hand): what it plays
// lies outside logjam's contract, so its failure is no finding ("": inside).
func contractNote(s schedule.Schedule) string {
	if err := s.InContract(); err != nil {
		return fmt.Sprintf("note: %v; random search does not draw it, and a failure here is not a finding against logjam", err)
	}
	return ""
}
