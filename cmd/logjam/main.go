// Command logjam runs the chaos suites with a profile from ginkgo.yml and
// renders their matrix: reports/ (matrix.json, junit.xml, matrix.html,
// matrix.md) and a table, with the command that reruns each cell that did
// not come out as expected.
//
//	logjam chaos [-profile local|nightly|focus] [-focus REGEXP] [-shard K/N] [-repeat N] [-procs N] [-slots N] [-out DIR]
//	logjam chaos -random N [-seed S] [-policy P] [-family F] | -replay SCHEDULE
//	logjam report [DIR] | report merge [-out DIR] SHARD_DIR... | report diff DIR_A DIR_B
//	logjam replay [-n N] BUNDLE_DIR
//	logjam calibrate -sink FILE.cpp [-py V,...] [-rows R,...] [-profiles buffered,unbuffered] [-out DIR]
package main

import (
	"io"
	"os"

	"logjam/calibrate"
	"logjam/harness/runner"
	"logjam/random/search"
)

func main() { os.Exit(logjam(os.Args[1:], os.Stdout)) }

// logjam sends `chaos -random`/`chaos -replay` to random search, `calibrate
// -sink` to the calibration (a user's sink on real CPython) and every other
// command line to the runner.
func logjam(args []string, w io.Writer) int {
	if len(args) > 0 && args[0] == "calibrate" {
		return calibrate.Command(args[1:], w)
	}
	if len(args) > 0 && args[0] == "chaos" && search.IsCommand(args[1:]) {
		return search.Command(args[1:], w)
	}
	return runner.Main(args, w)
}
