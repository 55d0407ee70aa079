package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega/gexec"

	"logjam/internal/testkit"
)

// Every bad input the product accepts, through logjam, simrt and a suite's
// test binary: each must exit 2 with exactly one line on stderr, nothing on
// stdout, and start nothing (logjam: no go process, no reports/; simrt: no
// telemetry, no done; a suite: no spec).

var logjamBin, simrtBin, suiteBin string

func TestMain(m *testing.M) {
	code := func() int {
		defer gexec.CleanupBuildArtifacts()
		var err error
		if logjamBin, err = gexec.Build("logjam/cmd/logjam"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if simrtBin, err = testkit.ChildPath(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if suiteBin, err = gexec.CompileTest("logjam/suites/utf8"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

const goodYML = `profiles:
  local:
    deadline: 20s
    timeout_scale: 1
    mode: fast
    seed: 0
    repeat: 1
    grace_floor: 2s
`

// yml is goodYML with one line replaced (old -> new).
func yml(old, new string) string { return strings.Replace(goodYML, old, new, 1) }

type badInput struct {
	name string
	prog string // "logjam", "simrt" or "suite"
	args []string
	env  []string
	yml  string // ginkgo.yml at the run's root; goodYML when empty
	want string // in the one line
}

var badInputs = []badInput{
	// logjam's command line
	{"no command", "logjam", nil, nil, "", "usage: logjam chaos"},
	{"unknown command", "logjam", []string{"run"}, nil, "", `unknown command "run" (accepted: chaos, report, replay, list, calibrate, doctor, test, ginkgo, simrt, version, -h)`},
	{"version with an argument", "logjam", []string{"version", "-x"}, nil, "", "version takes no arguments (1 given)"},
	{"doctor with an argument", "logjam", []string{"doctor", "x"}, nil, "", `doctor: unexpected argument "x" (usage: logjam doctor)`},
	{"stray word before flags", "logjam", []string{"chaos", "extra", "-focus", "X"}, nil, "", `no family "extra"`},
	{"no such family after flags", "logjam", []string{"chaos", "-focus", "X", "extra"}, nil, "", `no family "extra" (accepted: x)`},
	{"a flag after a family, its value missing", "logjam", []string{"chaos", "deadlock", "-focus"}, nil, "", "flag needs an argument: -focus"},
	{"list: no such family after a flag", "logjam", []string{"list", "-focus", "X", "extra"}, nil, "", `list: no family "extra" (accepted: x)`},
	{"calibrate: no sink", "logjam", []string{"calibrate"}, nil, "", "usage: logjam calibrate -sink FILE.cpp"},
	{"calibrate: no such sink file", "logjam", []string{"calibrate", "-sink", "nosuch.cpp"}, nil, "", "-sink nosuch.cpp: no such file (a C++ file defining logjam_make_sink(): docs/SINK.md)"},
	{"calibrate: repeat zero", "logjam", []string{"calibrate", "-sink", "x.cpp", "-repeat", "0"}, nil, "", "-repeat 0 (accepted: 1 to 100)"},
	{"calibrate: unknown buffering", "logjam", []string{"calibrate", "-sink", "x.cpp", "-buffering", "raw"}, nil, "", `-buffering: unknown "raw" (accepted: buffered, unbuffered)`},
	{"unknown flag", "logjam", []string{"chaos", "-colour"}, nil, "", "flag provided but not defined: -colour"},
	{"focus not a regexp", "logjam", []string{"chaos", "-focus", "D1 ["}, nil, "", "not a regular expression"},
	{"label filter not a filter", "logjam", []string{"chaos", "-label-filter", "(("}, nil, "", "is not a Ginkgo label filter: Syntax Error Parsing Label Filter"},
	{"list: label filter not a filter", "logjam", []string{"list", "-label-filter", "&&"}, nil, "", "is not a Ginkgo label filter"},
	{"procs negative", "logjam", []string{"chaos", "-procs", "-1"}, nil, "", "-procs and -repeat must be at least 0"},
	{"repeat negative", "logjam", []string{"chaos", "-repeat", "-2"}, nil, "", "-procs and -repeat must be at least 0"},
	{"slots zero", "logjam", []string{"chaos", "-slots", "0"}, nil, "", "-slots at least 1"},
	{"rerun-failed with a focus", "logjam", []string{"chaos", "-rerun-failed", "-focus", "X"}, nil, "", "-rerun-failed picks the cells itself"},
	{"rerun-failed with no run", "logjam", []string{"chaos", "-rerun-failed"}, nil, "", "no run in"},
	{"shard past its count", "logjam", []string{"chaos", "-shard", "3/2"}, nil, "", `shard "3/2" is not K/N with 1 <= K <= N`},
	{"shard not K/N", "logjam", []string{"chaos", "-shard", "half"}, nil, "", `shard "half" is not K/N`},
	{"shard zero", "logjam", []string{"chaos", "-shard", "0/4"}, nil, "", `shard "0/4"`},
	{"shard count without bound", "logjam", []string{"chaos", "-shard", "1/9000000000000000000"}, nil, "", "1 <= K <= N <= 256"},
	{"shard count not canonical", "logjam", []string{"chaos", "-shard", "01/2"}, nil, "", `shard "01/2"`},
	{"procs not a number", "logjam", []string{"chaos", "-procs", "two"}, nil, "", `invalid value "two" for flag -procs`},
	{"unknown profile flag", "logjam", []string{"chaos", "-profile", "weekly"}, nil, "", `no profile "weekly" (profiles: local)`},
	{"report: two directories", "logjam", []string{"report", "a", "b"}, nil, "", "usage: logjam report [DIR]"},
	{"report: no such directory", "logjam", []string{"report", "missing"}, nil, "", "missing"},
	{"report diff: one directory", "logjam", []string{"report", "diff", "a"}, nil, "", "usage: logjam report"},
	{"report merge: no shards", "logjam", []string{"report", "merge"}, nil, "", "report merge: no shard directories"},
	{"report merge: unknown flag", "logjam", []string{"report", "merge", "-into", "x", "a"}, nil, "", "flag provided but not defined: -into"},
	{"replay: no bundle", "logjam", []string{"replay"}, nil, "", "replay: want one bundle directory"},
	{"replay: not a bundle", "logjam", []string{"replay", "suites"}, nil, "", "is not an evidence bundle"},
	{"replay: zero runs", "logjam", []string{"replay", "-n", "0", "suites"}, nil, "", "-n of at least 1"},
	{"random: runs not a number", "logjam", []string{"chaos", "-random", "x"}, nil, "", `invalid value "x" for flag -random`},
	{"random: seed not a number", "logjam", []string{"chaos", "-random", "5", "-seed", "x"}, nil, "", `invalid value "x" for flag -seed`},
	{"random: unknown policy", "logjam", []string{"chaos", "-random", "5", "-policy", "nope"}, nil, "", `policy "nope" is neither a sink policy nor a lazy-init variant (accepted: pystderr`},
	{"random: a policy of the other kind", "logjam", []string{"chaos", "-random", "5", "-kind", "sink", "-policy", "old"}, nil, "", `policy "old" is not a sink policy (accepted with -kind sink: pystderr, fd2`},
	{"random: a replay that is no schedule", "logjam", []string{"chaos", "-replay", "zzz"}, nil, "", "(accepted: a schedule as logjam chaos -random prints it: its JSON, or the base64 of its JSON)"},
	{"random: unknown kind", "logjam", []string{"chaos", "-random", "5", "-kind", "nope"}, nil, "", `kind "nope" (accepted: sink, lazyinit)`},
	{"random: unknown kind, its old flag", "logjam", []string{"chaos", "-random", "5", "-family", "nope"}, nil, "", `kind "nope" (accepted: sink, lazyinit)`},
	{"random: stray word", "logjam", []string{"chaos", "-random", "5", "extra"}, nil, "", `unexpected argument "extra"`},
	// logjam's environment
	{"LOGJAM_PROFILE unknown", "logjam", []string{"chaos"}, []string{"LOGJAM_PROFILE=weekly"}, "", `no profile "weekly"`},
	{"LOGJAM_TIMEOUT_SCALE NaN", "logjam", []string{"chaos"}, []string{"LOGJAM_TIMEOUT_SCALE=NaN"}, "", `LOGJAM_TIMEOUT_SCALE="NaN" is not a finite number above 0`},
	{"LOGJAM_TIMEOUT_SCALE Inf", "logjam", []string{"chaos"}, []string{"LOGJAM_TIMEOUT_SCALE=Inf"}, "", `LOGJAM_TIMEOUT_SCALE="Inf"`},
	{"LOGJAM_TIMEOUT_SCALE -Inf", "logjam", []string{"chaos"}, []string{"LOGJAM_TIMEOUT_SCALE=-Inf"}, "", `LOGJAM_TIMEOUT_SCALE="-Inf"`},
	{"LOGJAM_TIMEOUT_SCALE past float64", "logjam", []string{"chaos"}, []string{"LOGJAM_TIMEOUT_SCALE=1e400"}, "", `LOGJAM_TIMEOUT_SCALE="1e400"`},
	{"LOGJAM_TIMEOUT_SCALE zero", "logjam", []string{"chaos"}, []string{"LOGJAM_TIMEOUT_SCALE=0"}, "", `LOGJAM_TIMEOUT_SCALE="0"`},
	{"LOGJAM_TIMEOUT_SCALE negative", "logjam", []string{"chaos"}, []string{"LOGJAM_TIMEOUT_SCALE=-2"}, "", `LOGJAM_TIMEOUT_SCALE="-2"`},
	{"LOGJAM_TIMEOUT_SCALE a word", "logjam", []string{"chaos"}, []string{"LOGJAM_TIMEOUT_SCALE=slow"}, "", `LOGJAM_TIMEOUT_SCALE="slow"`},
	{"LOGJAM_TIMEOUT_SCALE overflows the deadline", "logjam", []string{"chaos"}, []string{"LOGJAM_TIMEOUT_SCALE=1e300"}, "", "overflows"},
	{"LOGJAM_SEED a word", "logjam", []string{"chaos"}, []string{"LOGJAM_SEED=lucky"}, "", `LOGJAM_SEED="lucky" is not a whole number`},
	{"LOGJAM_SEED a fraction", "logjam", []string{"chaos"}, []string{"LOGJAM_SEED=1.5"}, "", `LOGJAM_SEED="1.5"`},
	{"ginkgo: LOGJAM_SEED a word", "logjam", []string{"ginkgo", "./suites/capture"}, []string{"LOGJAM_SEED=lucky"}, "", `ginkgo: LOGJAM_SEED="lucky" is not a whole number`},
	{"ginkgo: LOGJAM_PROFILE unknown", "logjam", []string{"ginkgo", "./suites/capture"}, []string{"LOGJAM_PROFILE=weekly"}, "", `has no profile "weekly"`},
	{"GO_FAILPOINTS valid but ambient", "logjam", []string{"chaos"}, []string{"GO_FAILPOINTS=logjam/probe=return(1)"}, "", "would apply to no cell"},
	{"GO_FAILPOINTS malformed", "logjam", []string{"chaos"}, []string{"GO_FAILPOINTS=probe"}, "", `malformed GO_FAILPOINTS entry "probe"`},
	{"GO_FAILPOINTS unknown point", "logjam", []string{"chaos"}, []string{"GO_FAILPOINTS=logjam/nope=return"}, "", `unknown failpoint "logjam/nope"`},
	{"GO_FAILPOINTS_HTTP", "logjam", []string{"chaos"}, []string{"GO_FAILPOINTS_HTTP=127.0.0.1:0"}, "", "GO_FAILPOINTS_HTTP"},
	{"reports/ unwritable", "logjam", []string{"chaos"}, []string{"LOGJAM_TEST_REPORTS_IS_A_FILE=1"}, "", "reports directory"},
	// ginkgo.yml
	{"ginkgo.yml missing", "logjam", []string{"chaos"}, nil, "-", "no ginkgo.yml in"},
	{"ginkgo.yml not YAML", "logjam", []string{"chaos"}, nil, "profiles: [", "is malformed"},
	{"ginkgo.yml unknown key", "logjam", []string{"chaos"}, nil, yml("    repeat: 1\n", "    repeat: 1\n    colour: red\n    size: 3\n"), "field colour not found"},
	{"ginkgo.yml duplicate profile", "logjam", []string{"chaos"}, nil, goodYML + "  local:\n    deadline: 1s\n", "already defined"},
	{"deadline without unit", "logjam", []string{"chaos"}, nil, yml("deadline: 20s", "deadline: 20"), "cannot unmarshal"},
	{"deadline zero", "logjam", []string{"chaos"}, nil, yml("deadline: 20s", "deadline: 0s"), "deadline must be a positive duration"},
	{"deadline negative", "logjam", []string{"chaos"}, nil, yml("deadline: 20s", "deadline: -5s"), "deadline must be a positive duration"},
	{"deadline not a duration", "logjam", []string{"chaos"}, nil, yml("deadline: 20s", "deadline: soon"), "is malformed"},
	{"timeout_scale zero", "logjam", []string{"chaos"}, nil, yml("timeout_scale: 1", "timeout_scale: 0"), "timeout_scale must be a finite number above 0"},
	{"timeout_scale negative", "logjam", []string{"chaos"}, nil, yml("timeout_scale: 1", "timeout_scale: -1"), "timeout_scale must be"},
	{"timeout_scale NaN", "logjam", []string{"chaos"}, nil, yml("timeout_scale: 1", "timeout_scale: .nan"), "timeout_scale must be"},
	{"timeout_scale Inf", "logjam", []string{"chaos"}, nil, yml("timeout_scale: 1", "timeout_scale: .inf"), "timeout_scale must be"},
	{"timeout_scale a word", "logjam", []string{"chaos"}, nil, yml("timeout_scale: 1", "timeout_scale: double"), "is malformed"},
	{"mode unknown", "logjam", []string{"chaos"}, nil, yml("mode: fast", "mode: quick"), `mode "quick" is not fast or strict`},
	{"mode missing", "logjam", []string{"chaos"}, nil, yml("    mode: fast\n", ""), `mode "" is not fast or strict`},
	{"seed a word", "logjam", []string{"chaos"}, nil, yml("seed: 0", "seed: lucky"), "is malformed"},
	{"repeat zero", "logjam", []string{"chaos"}, nil, yml("repeat: 1", "repeat: 0"), "repeat must be at least 1"},
	{"repeat a fraction", "logjam", []string{"chaos"}, nil, yml("repeat: 1", "repeat: 1.5"), `repeat "1.5" is not a whole number`},
	{"grace_floor negative", "logjam", []string{"chaos"}, nil, yml("grace_floor: 2s", "grace_floor: -1s"), "grace_floor must not be negative"},
	{"no profiles", "logjam", []string{"chaos"}, nil, "profiles: {}\n", `no profile "local" (profiles: )`},

	// simrt's command line
	{"simrt: no scenario", "simrt", nil, nil, "", "-scenario is required"},
	{"simrt: unknown scenario", "simrt", []string{"-scenario", "Z9"}, nil, "", "unknown scenario"},
	{"simrt: lower-case scenario", "simrt", []string{"-scenario", "d1"}, nil, "", "unknown scenario"},
	{"simrt: unknown policy", "simrt", []string{"-scenario", "D1", "-policy", "stderr"}, nil, "", `unknown policy "stderr" (accepted: `},
	{"simrt: unknown platform", "simrt", []string{"-scenario", "D1", "-platform", "windows"}, nil, "", "unknown platform"},
	{"simrt: unknown buffering", "simrt", []string{"-scenario", "D1", "-buffering", "raw"}, nil, "", `unknown buffering "raw"`},
	{"simrt: unknown buffering, its old flag", "simrt", []string{"-scenario", "D1", "-stderr", "raw"}, nil, "", `unknown buffering "raw"`},
	{"simrt: Python too old", "simrt", []string{"-scenario", "D1", "-python", "3.9"}, nil, "", "unknown Python version"},
	{"simrt: Python too new", "simrt", []string{"-scenario", "D1", "-python", "3.16"}, nil, "", "unknown Python version"},
	{"simrt: Python 2", "simrt", []string{"-scenario", "D1", "-python", "2.7"}, nil, "", "unknown Python version"},
	{"simrt: Python not a version", "simrt", []string{"-scenario", "D1", "-python", "3.12.x"}, nil, "", "unknown Python version"},
	{"simrt: variant on a sink scenario", "simrt", []string{"-scenario", "D1", "-variant", "old"}, nil, "", "takes no -variant or -backend"},
	{"simrt: unknown variant", "simrt", []string{"-scenario", "L1", "-variant", "new", "-backend", "cuda"}, nil, "", "new"},
	{"simrt: unknown backend", "simrt", []string{"-scenario", "L1", "-variant", "old", "-backend", "tpu"}, nil, "", "tpu"},
	{"simrt: stray argument", "simrt", []string{"-scenario", "D1", "now"}, nil, "", `unexpected argument "now"`},
	{"simrt: unknown flag", "simrt", []string{"-scenario", "D1", "-frobnicate"}, nil, "", "flag provided but not defined: -frobnicate"},
	// simrt's environment
	{"WATCHDOG_TELEMETRY_FD a word", "simrt", []string{"-scenario", "H0"}, []string{"WATCHDOG_TELEMETRY_FD=three"}, "", `WATCHDOG_TELEMETRY_FD="three" is not a whole number`},
	{"WATCHDOG_TELEMETRY_FD stdout", "simrt", []string{"-scenario", "H0"}, []string{"WATCHDOG_TELEMETRY_FD=1"}, "", "WATCHDOG_TELEMETRY_FD=1 would mix telemetry"},
	{"WATCHDOG_TELEMETRY_FD fd 2", "simrt", []string{"-scenario", "H0"}, []string{"WATCHDOG_TELEMETRY_FD=2"}, "", "WATCHDOG_TELEMETRY_FD=2 would mix telemetry"},
	{"WATCHDOG_TELEMETRY_FD negative", "simrt", []string{"-scenario", "H0"}, []string{"WATCHDOG_TELEMETRY_FD=-1"}, "", "WATCHDOG_TELEMETRY_FD=-1"},
	{"WATCHDOG_TELEMETRY_FD not open", "simrt", []string{"-scenario", "H0"}, []string{"WATCHDOG_TELEMETRY_FD=99"}, "", "WATCHDOG_TELEMETRY_FD=99 is not an open descriptor"},
	{"GO_FAILPOINTS: no name=terms", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=bad"}, "", `malformed GO_FAILPOINTS entry "bad"`},
	{"GO_FAILPOINTS: two equals", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/probe=return(1)=2"}, "", "want name=terms"},
	{"GO_FAILPOINTS: trailing separator", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/probe=return(1);"}, "", `malformed GO_FAILPOINTS entry ""`},
	{"GO_FAILPOINTS: unknown point", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/backend-load-fail=return(5)"}, "", `unknown failpoint "logjam/backend-load-fail"`},
	{"GO_FAILPOINTS: point without the prefix", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=probe=return(1)"}, "", `unknown failpoint "probe"`},
	{"GO_FAILPOINTS: unknown action", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/probe=explode"}, "", "malformed terms"},
	{"GO_FAILPOINTS: parser panics", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/probe=return(abc)"}, "", "parser panics"},
	{"GO_FAILPOINTS: int point, no value", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/backend-load-fails=return"}, "", "return takes a whole number here"},
	{"GO_FAILPOINTS: int point, a word", "simrt", []string{"-scenario", "H0"}, []string{`GO_FAILPOINTS=logjam/backend-execute-delay=return("slow")`}, "", "return takes a whole number here"},
	{"GO_FAILPOINTS: flag point, a number", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/stream-write-oserror=return(5)"}, "", "return takes no value or a bool here"},
	{"GO_FAILPOINTS: choice point, unknown choice", "simrt", []string{"-scenario", "H0"}, []string{`GO_FAILPOINTS=logjam/stream-write-interrupt=return("after")`}, "", `return takes one of ["before" "half"] here`},
	{"GO_FAILPOINTS: sleep on a value point", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/probe=sleep(10)"}, "", "sleep does not fit this point"},
	{"GO_FAILPOINTS: sleep without ms", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/lazy-switch=sleep(x)"}, "", "malformed terms"},
	{"GO_FAILPOINTS: return on a hook", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/lazy-switch=return(1)"}, "", `action "return" does not fit this point`},
	{"GO_FAILPOINTS: bad second term", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS=logjam/probe=1*return(1)->return(x)"}, "", "logjam/probe"},
	{"GO_FAILPOINTS_HTTP", "simrt", []string{"-scenario", "H0"}, []string{"GO_FAILPOINTS_HTTP=127.0.0.1:0"}, "", "GO_FAILPOINTS_HTTP"},

	// a suite's test binary (go test, go tool ginkgo)
	{"suite: LOGJAM_PROFILE unknown", "suite", nil, []string{"LOGJAM_PROFILE=weekly"}, "", `no profile "weekly"`},
	{"suite: LOGJAM_TIMEOUT_SCALE NaN", "suite", nil, []string{"LOGJAM_TIMEOUT_SCALE=NaN"}, "", `LOGJAM_TIMEOUT_SCALE="NaN"`},
	{"suite: LOGJAM_TIMEOUT_SCALE Inf", "suite", nil, []string{"LOGJAM_TIMEOUT_SCALE=+Inf"}, "", `LOGJAM_TIMEOUT_SCALE="+Inf"`},
	{"suite: LOGJAM_SEED a word", "suite", nil, []string{"LOGJAM_SEED=x"}, "", `LOGJAM_SEED="x"`},
	{"suite: GO_FAILPOINTS valid but ambient", "suite", nil, []string{"GO_FAILPOINTS=logjam/stream-write-delay=return(5)"}, "", "would apply to no cell"},
	{"suite: GO_FAILPOINTS unknown point", "suite", nil, []string{"GO_FAILPOINTS=logjam/nope=return(1)"}, "", `unknown failpoint "logjam/nope"`},
	{"suite: GO_FAILPOINTS malformed", "suite", nil, []string{"GO_FAILPOINTS=;"}, "", "malformed GO_FAILPOINTS entry"},
	{"suite: LOGJAM_SHARD malformed", "suite", nil, []string{"LOGJAM_SHARD=3/2"}, "", `LOGJAM_SHARD: shard "3/2"`},
	{"suite: LOGJAM_SHARD without bound", "suite", nil, []string{"LOGJAM_SHARD=1/9000000000000000000"}, "", "1 <= K <= N <= 256"},
	{"suite: LOGJAM_SIMRT missing", "suite", nil, []string{"LOGJAM_SIMRT=/nonexistent/simrt"}, "", `LOGJAM_SIMRT="/nonexistent/simrt" is not an executable file`},
	{"suite: LOGJAM_REPEAT a word", "suite", nil, []string{"LOGJAM_REPEAT=twice"}, "", `LOGJAM_REPEAT="twice"`},
	{"suite: ginkgo.yml bad mode", "suite", nil, nil, yml("mode: fast", "mode: slow"), `mode "slow" is not fast or strict`},
	{"suite: ginkgo.yml missing", "suite", nil, nil, "-", "no ginkgo.yml in"},
}

// run runs one case in a fresh root holding its ginkgo.yml, with a fake
// `go` first on PATH that leaves a mark if anything starts it.
func (c badInput) run(t *testing.T) (stdout, stderr string, code int, root string) {
	t.Helper()
	root = t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "suites", "x"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "suites", "x", "x_suite_test.go"), []byte("package x_test\n"), 0o644))
	if c.yml != "-" {
		body := c.yml
		if body == "" {
			body = goodYML
		}
		must(t, os.WriteFile(filepath.Join(root, "ginkgo.yml"), []byte(body), 0o644))
	}
	fakeBin := filepath.Join(t.TempDir(), "bin")
	must(t, os.Mkdir(fakeBin, 0o755))
	must(t, os.WriteFile(filepath.Join(fakeBin, "go"), []byte("#!/bin/sh\ntouch \"$LOGJAM_TEST_GO_RAN\"\nexit 0\n"), 0o755))
	env := []string{"PATH=" + fakeBin + string(os.PathListSeparator) + os.Getenv("PATH"), "LOGJAM_TEST_GO_RAN=" + filepath.Join(root, "go-ran"),
		"XDG_CACHE_HOME=" + t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "LOGJAM_") && !strings.HasPrefix(kv, "GO_FAILPOINTS") && !strings.HasPrefix(kv, "WATCHDOG_") && !strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			env = append(env, kv)
		}
	}
	for _, kv := range c.env {
		if kv == "LOGJAM_TEST_REPORTS_IS_A_FILE=1" {
			must(t, os.WriteFile(filepath.Join(root, "reports"), nil, 0o444))
			continue
		}
		env = append(env, kv)
	}
	var cmd *exec.Cmd
	telemetry, err := os.Create(filepath.Join(root, "telemetry.jsonl"))
	must(t, err)
	defer telemetry.Close()
	switch c.prog {
	case "logjam":
		cmd = exec.Command(logjamBin, c.args...)
	case "simrt":
		cmd = exec.Command(simrtBin, c.args...)
		cmd.ExtraFiles = []*os.File{telemetry} // fd 3, where a run by hand writes telemetry
	case "suite":
		cmd = exec.Command(suiteBin, append([]string{"-test.timeout=60s"}, c.args...)...)
	}
	cmd.Dir, cmd.Env = root, env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code, root
}

func TestEveryBadInputIsRefusedWithOneLineAndExit2(t *testing.T) {
	for _, c := range badInputs {
		t.Run(c.prog+"/"+c.name, func(t *testing.T) {
			stdout, stderr, code, root := c.run(t)
			if code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr is not exactly one line: %q", stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not say %q", stderr, c.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat(filepath.Join(root, "go-ran")); err == nil {
				t.Errorf("go was started")
			}
			if fi, err := os.Stat(filepath.Join(root, "reports")); err == nil && fi.IsDir() {
				t.Errorf("reports/ was created")
			}
			if fi, err := os.Stat(filepath.Join(root, "telemetry.jsonl")); err == nil && fi.Size() > 0 {
				t.Errorf("the child wrote telemetry: it ran")
			}
		})
	}
}

// The checks above can fail: good input does start go, write reports/,
// print usage, or run the child.
func TestGoodInputStartsWhatBadInputMayNot(t *testing.T) {
	_, stderr, _, root := badInput{prog: "logjam", args: []string{"chaos", "-focus", "D1"}}.run(t)
	if _, err := os.Stat(filepath.Join(root, "go-ran")); err != nil {
		t.Errorf("good input did not start go: %s", stderr)
	}
	if fi, err := os.Stat(filepath.Join(root, "reports")); err != nil || !fi.IsDir() {
		t.Errorf("good input made no reports/: %v", err)
	}
	stdout, _, code, root := badInput{prog: "simrt", args: []string{"-scenario", "C1", "-policy", "logjam"}, env: []string{"WATCHDOG_TELEMETRY_FD=3"}}.run(t)
	if code != 0 || !strings.Contains(stdout, "done") {
		t.Errorf("simrt C1: exit %d, stdout %q", code, stdout)
	}
	if fi, err := os.Stat(filepath.Join(root, "telemetry.jsonl")); err != nil || fi.Size() == 0 {
		t.Errorf("simrt C1 wrote no telemetry on fd 3")
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		stdout, stderr, code, _ := badInput{prog: "logjam", args: args}.run(t)
		if code != 0 || !strings.HasPrefix(stdout, "usage: logjam chaos") || stderr != "" {
			t.Errorf("logjam %v: exit %d, stdout %q, stderr %q; want usage on stdout, exit 0", args, code, stdout, stderr)
		}
		// Every command and every flag, random search's included.
		for _, want := range []string{"logjam replay", "logjam list", "logjam doctor", "logjam version", "logjam calibrate", "logjam test", "logjam ginkgo", "logjam simrt", "report merge", "-random", "-replay", "-shrink-runs", "-replays", "-run-id", "-focus"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("logjam %v does not mention %s", args, want)
			}
		}
	}
	// Each subcommand's own -h: its usage on stdout, exit 0.
	for _, args := range [][]string{{"chaos", "-h"}, {"calibrate", "-h"}, {"replay", "-h"}, {"report", "-h"}, {"report", "merge", "-h"}, {"report", "diff", "-h"}, {"list", "-h"}, {"doctor", "-h"}, {"test", "-h"}, {"version", "-h"}} {
		stdout, stderr, code, _ := badInput{prog: "logjam", args: args}.run(t)
		if code != 0 || !strings.HasPrefix(stdout, "usage: logjam "+args[0]) || stderr != "" {
			t.Errorf("logjam %v: exit %d, stdout %q, stderr %q; want its usage on stdout, exit 0", args, code, stdout, stderr)
		}
		if args[0] == "report" && !strings.Contains(stdout, "logjam report diff A B      the cells whose") {
			t.Errorf("logjam report -h does not describe its subcommands:\n%s", stdout)
		}
		// chaos -h describes every flag chaos takes, random search's too.
		for _, want := range []string{"-rerun-failed", "-keep-bundles", "-random", "-shrink-runs", "-replay"} {
			if args[0] == "chaos" && !strings.Contains(stdout, want) {
				t.Errorf("logjam chaos -h does not describe %s", want)
			}
		}
	}
	stdout, _, code, _ = badInput{prog: "simrt", args: []string{"-h"}}.run(t)
	if code != 0 || !strings.HasPrefix(stdout, "usage: simrt") {
		t.Errorf("simrt -h: exit %d, stdout %q", code, stdout)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// suiteTest skips a test under -short, saying why (it compiles the suites,
// or runs them), and gives the module's root.
func suiteTest(t *testing.T, why string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + why)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}
