// Command logjam runs the chaos suites with a profile from ginkgo.yml and
// renders their matrix: reports/ (matrix.json, junit.xml, matrix.html,
// matrix.md) and a table, with the command that reruns each cell that did
// not come out as expected.
//
//	logjam chaos [-profile local|nightly|focus] [-focus REGEXP] [-shard K/N] [-repeat N] [-procs N] [-slots N] [-out DIR]
//	logjam chaos -random N [-seed S] [-policy P] [-family F] | -replay SCHEDULE
//	logjam report [DIR] | report merge [-out DIR] SHARD_DIR... | report diff DIR_A DIR_B
//	logjam replay [-n N] BUNDLE_DIR
//	logjam calibrate -sink FILE.cpp [-py V,...] [-rows R,...] [-buffering buffered,unbuffered] [-out DIR]
//	logjam list [-focus REGEXP] [FAMILY...]
//	logjam doctor
//	logjam version
//	logjam test [GO TEST ARGS] | ginkgo [GINKGO ARGS] | simrt [SIMRT ARGS]
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"logjam/calibrate"
	"logjam/harness/runner"
	"logjam/internal/config"
	"logjam/random/search"
)

func main() {
	// The ./logjam script names its checkout, for a run from another
	// folder (config.Checkout); no child inherits the word.
	config.Checkout = os.Getenv(config.CheckoutEnv)
	os.Unsetenv(config.CheckoutEnv)
	os.Exit(logjam(os.Args[1:], os.Stdout))
}

// logjam sends `chaos -random`/`chaos -replay` to random search, `calibrate
// -sink` to the calibration (a user's sink on real CPython) and every other
// command line to the runner.
func logjam(args []string, w io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		usage(w)
		return 0
	}
	if len(args) > 0 && args[0] == "chaos" && search.IsCommand(args[1:]) && slices.ContainsFunc(args[1:], isHelp) {
		search.Usage(w) // chaos -random -h: random search's own flags
		return 0
	}
	if len(args) > 0 && args[0] == "chaos" && slices.ContainsFunc(args[1:], isHelp) {
		code := runner.Main(args, w) // chaos -h: the suites' flags, then random search's
		fmt.Fprintln(w)
		search.Usage(w)
		return code
	}
	if len(args) > 0 && args[0] == "test" {
		return goTest(args[1:], w, os.Stderr)
	}
	if len(args) > 0 && args[0] == "ginkgo" {
		return ginkgo(args[1:], w, os.Stderr)
	}
	if len(args) > 0 && args[0] == "simrt" {
		return simrt(args[1:], w, os.Stderr)
	}
	if len(args) > 0 && args[0] == "version" {
		return version(args[1:], w)
	}
	if len(args) > 0 && args[0] == "doctor" {
		return doctor(args[1:], w)
	}
	if len(args) > 0 && args[0] == "calibrate" {
		return calibrate.Command(args[1:], w)
	}
	if len(args) > 0 && args[0] == "chaos" && search.IsCommand(args[1:]) {
		return search.Command(args[1:], w)
	}
	return runner.Main(args, w)
}

func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// usage is every command and every flag: the runner's, random search's,
// the calibration's and doctor.
func usage(w io.Writer) {
	runner.Usage(w)
	fmt.Fprintln(w)
	search.Usage(w)
	fmt.Fprintf(w, "\n%s\n  (docs/SINK.md: your own sink played on real CPython)\n%s\n  (which tools and interpreters the suite can use here)\n%s\n  (the module, its commit and the Go toolchain that built this logjam)\n%s\n%s\n%s\n", calibrateUsage, doctorUsage, versionUsage, goTestUsage, ginkgoUsage, simrtUsage)
}

const (
	calibrateUsage = "usage: logjam calibrate -sink FILE.cpp [-py V,...] [-rows R,...] [-buffering buffered,unbuffered] [-repeat N] [-out DIR]"
	doctorUsage    = "usage: logjam doctor"
	versionUsage   = "usage: logjam version"
)
