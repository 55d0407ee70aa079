// Command logjam runs the chaos suites with a profile from ginkgo.yml and
// renders their matrix: reports/ (matrix.json, junit.xml, matrix.html,
// matrix.md) and a table, with the command that reruns each cell that did
// not come out as expected.
//
//	logjam chaos [-profile local|nightly|focus] [-focus REGEXP] [-shard K/N] [-repeat N] [-procs N] [-slots N] [-out DIR]
//	logjam chaos -random N [-seed S] [-policy P] [-family F] | -replay SCHEDULE
//	logjam report [DIR] | report merge [-out DIR] SHARD_DIR... | report diff DIR_A DIR_B
//	logjam replay [-n N] BUNDLE_DIR
package main

import (
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout)) }

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "logjam: "+format+"\n", args...)
	return 2
}

func run(args []string, w io.Writer) int {
	if len(args) == 0 {
		return fail("%s | %s", chaosUsage, mergeUsage)
	}
	if isHelp(args[0]) {
		return printUsage(w)
	}
	switch args[0] {
	case "chaos":
		if isRandom(args[1:]) {
			return randomChaos(args[1:], w) // random.go
		}
		return runChaos(args[1:], w)
	case "report":
		return reportCmd(args[1:], w)
	case "replay":
		return replayCmd(args[1:], w)
	}
	return fail("unknown command %q (accepted: chaos, report, replay, -h)", args[0])
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}
