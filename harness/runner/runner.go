// Package runner runs the chaos suites and renders their matrix: the
// engine behind the logjam command (chaos, report, replay). The command
// only wires os.Args, stdout and the exit status to Main.
package runner

import (
	"fmt"
	"io"
	"os"

	"logjam/internal/textout"
)

// fail prints one line on stderr and returns exit status 2 (bad input).
// The line may quote someone else's text (a shard's, a bundle's, a JSON
// decoder's error about it): it is shown with textout.Terminal, so that it
// stays one line and sends no escape sequence.
func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "logjam: %s\n", textout.Terminal(fmt.Sprintf(format, args...)))
	return 2
}

// Main runs one logjam command line (without the program name), writing
// its report to w, and returns the exit status.
func Main(args []string, w io.Writer) int {
	if len(args) == 0 {
		return fail("%s | %s", chaosUsage, mergeUsage)
	}
	if isHelp(args[0]) {
		return printUsage(w)
	}
	switch args[0] {
	case "chaos":
		return runChaos(args[1:], w)
	case "report":
		return reportCmd(args[1:], w)
	case "replay":
		return replayCmd(args[1:], w)
	case "list":
		return listCmd(args[1:], w)
	}
	return fail("unknown command %q (accepted: chaos, report, replay, list, calibrate, doctor, test, ginkgo, simrt, version, -h)", args[0])
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}
