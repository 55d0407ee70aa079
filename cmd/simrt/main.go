// Command simrt is the child process of every scenario: it runs one
// scenario program against the simulated runtime with the given policy,
// platform, Python version and buffering.
//
// fd 2 is the system under test's real stderr and nothing else writes to it;
// stdout gets the script's prints and, last, "done"; telemetry goes, as JSON
// lines, only to the descriptor WATCHDOG_TELEMETRY_FD (or -telemetry-fd)
// names. Run by hand, -deadline ends a run that would hang (exit 124). Exit status: 0 after done, 1 when an exception
// escapes to the top, killed by SIGABRT on an abort, 2 for bad input, 4 when the
// scenario refused to go on because a state it promised did not hold.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"logjam/failpoints"
	"logjam/internal/axes"
	"logjam/scenario"
	"logjam/sim"
	"logjam/sim/policy"
	"logjam/sim/programs"
	"logjam/telemetry"
)

func main() { os.Exit(run(os.Args[1:])) }

func usageError(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "simrt: "+format+"\n", args...)
	return 2
}

func run(args []string) int {
	fs := flag.NewFlagSet("simrt", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	id := fs.String("scenario", "", "scenario id (see -list)")
	policyName := fs.String("policy", "merged", "log sink policy: "+strings.Join(axes.Policies, ", "))
	platform := fs.String("platform", "linux", "platform whose kernel the model follows: linux, macos")
	python := fs.String("python", scenario.DefaultPython, "Python version, 3.10 to 3.15 (X.Y or X.Y.Z)")
	buffering := fs.String("buffering", "buffered", "how Python opened sys.stderr: buffered, or unbuffered (python -u, PYTHONUNBUFFERED=1)")
	fs.StringVar(buffering, "stderr", "buffered", "") // the old spelling of -buffering, left out of the help
	variant := fs.String("variant", "", "lazy-init variant for L scenarios: old, initfast, norace, fixed")
	backend := fs.String("backend", "", "lazy-init backend for L scenarios: cuda, xpu, mtia")
	sched := fs.String("schedule", "", "random schedule for scenario R (base64 of its JSON, or the JSON); it names the policy, platform and Python")
	list := fs.Bool("list", false, "list every scenario with its parameters")
	sigint := fs.String("sigint", "", "SIGINT at start: default, or ignored (as `cmd &` in a non-interactive shell starts it); unset: the caller's")
	sigintIgnored := fs.Bool("sigint-ignored", false, "the same as -sigint ignored")
	telFD := fs.Int("telemetry-fd", 0, "by hand: write telemetry to this descriptor (3 or more, open for writing: -telemetry-fd 3 3>telemetry.jsonl); the watchdog names its own in WATCHDOG_TELEMETRY_FD")
	fd2Acks := fs.Bool("fd2-acks", false, "the parent's reader of fd 2 answers the child's fd2-stall and fd2-read marks with SIGUSR1 (the watchdog's cells do); by hand, leave it off")
	deadline := fs.Duration("deadline", 0, "by hand: end the run after this long (exit status 124), hung or not; 0: no deadline (the watchdog keeps its own)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Println("usage: simrt -scenario ID [-policy P] [-platform linux|macos] [-python X.Y[.Z]] [-buffering buffered|unbuffered] | simrt -list")
			help := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
			fs.VisitAll(func(f *flag.Flag) {
				if f.Name != "stderr" {
					help.Var(f.Value, f.Name, f.Usage)
				}
			})
			help.SetOutput(os.Stdout)
			help.PrintDefaults()
			return 0
		}
		return usageError("%v (usage: simrt -scenario ID [-policy P] [-platform linux|macos] [-python X.Y[.Z]] [-buffering buffered|unbuffered]; simrt -list)", err)
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if code, done := startWithSIGINT(*sigint, *sigintIgnored, args); done {
		return code
	}
	if *list {
		printList(os.Stdout)
		return 0
	}
	if *deadline < 0 {
		return usageError("-deadline %s is negative", *deadline)
	}
	if *telFD != 0 {
		os.Setenv(telemetry.FDEnv, strconv.Itoa(*telFD))
	}
	if err := checkTelemetryFD(); err != nil {
		return usageError("%v", err)
	}
	if *id == "" {
		return usageError("-scenario is required (see simrt -list)")
	}
	prog, err := programs.Lookup(*id)
	if err != nil {
		return usageError("%v", err)
	}
	// pingcap/failpoint already refused a malformed value before main (its
	// init prints "bad failpoint" and exits 1); an unknown point or a term
	// that does not fit the point is refused here, before anything runs.
	if _, err := failpoints.Parse(os.Getenv("GO_FAILPOINTS")); err != nil {
		return usageError("GO_FAILPOINTS: %v", err)
	}
	if err := applySchedule(fs, prog.ID, *sched, policyName, platform, python, buffering); err != nil {
		return usageError("%v", err)
	}
	plat, err := sim.ParsePlatform(*platform)
	if err != nil {
		return usageError("%v", err)
	}
	ver, err := sim.ParseVersion(*python)
	if err != nil {
		return usageError("%v", err)
	}
	buf, err := sim.ParseBuffering(*buffering)
	if err != nil {
		return usageError("%v", err)
	}
	mk, err := policy.ByName(*policyName)
	if err != nil {
		return usageError("%v", err)
	}
	if prog.Check != nil {
		if err := prog.Check(*variant, *backend); err != nil {
			return usageError("%v", err)
		}
	} else if *variant != "" || *backend != "" {
		return usageError("scenario %s takes no -variant or -backend", prog.ID)
	}
	if *deadline > 0 {
		endAfter(*deadline)
	}
	if prog.Raw != nil {
		return prog.Raw()
	}
	rt, err := sim.New(sim.Options{Platform: plat, Python: ver, Buffering: buf, Policy: mk, Console: byHandConsole(), ReaderAcks: *fd2Acks})
	if err != nil {
		return usageError("%v", err)
	}
	scope := failpoints.NewScope()
	defer scope.Close()
	env := &programs.Env{RT: rt, Main: rt.Main, FP: scope, Variant: *variant, Backend: *backend, Schedule: *sched}
	if exc := prog.Run(env); exc != nil {
		rt.Tel.Emit(telemetry.Exception{Thread: rt.Main.Name, Type: exc.Type, Text: exc.Msg, Escaped: true})
		_ = rt.In.Stderr().Write(rt.Main, exc.Traceback()+"\n")
		rt.In.DumpStreams()
		rt.Tel.Emit(telemetry.Exit{Code: 1})
		return 1
	}
	rt.In.Print("done")
	if err := rt.In.Shutdown(rt.Main); err != nil {
		// The scenario broke its own promise: no verdict on the policy.
		rt.Tel.Emit(telemetry.ScenarioError{Reason: err.Error()})
		rt.In.Print(err.Error())
		rt.Tel.Emit(telemetry.Exit{Code: scenario.ExitScenarioError})
		return scenario.ExitScenarioError
	}
	rt.Tel.Emit(telemetry.Exit{Code: 0})
	return 0
}

func printList(w io.Writer) {
	fmt.Fprintln(w, "scenarios (simrt -scenario ID -policy P -platform linux|macos -python X.Y[.Z]):")
	for _, p := range scenario.All() {
		c := p.Contract
		params := fmt.Sprintf("ends=%s fd2=%s", c.Ends, c.FD2)
		if c.Replaced {
			params += " sys.stderr=replaced"
		}
		if c.FD2Stalled {
			params += " reader-starts-stalled"
		}
		if c.SigintIgnored {
			params += " sigint=ignored(-sigint ignored)"
		}
		if prog, _ := programs.Lookup(p.ID); prog != nil && prog.Raw != nil {
			params = "purpose-built child (no runtime; -policy ignored)"
		}
		fmt.Fprintf(w, "  %-4s %-9s %-40s %s\n       %s\n", p.ID, p.Family, p.Slug, params, p.Summary)
	}
	fmt.Fprintf(w, "policies: %s\nplatforms: linux, macos\npython: 3.10 to 3.15 (X.Y or X.Y.Z)\nbuffering: buffered, unbuffered\n", strings.Join(axes.Policies, ", "))
	fmt.Fprintln(w, "failpoints (GO_FAILPOINTS=name=terms;...):")
	for _, fp := range failpoints.Catalogue {
		fmt.Fprintf(w, "  %-32s %s [%s]\n", fp.Name, fp.Does, fp.Terms)
	}
}
