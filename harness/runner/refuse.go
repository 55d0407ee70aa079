package runner

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/failpoints"
)

// usage is the head of what `logjam -h` and `logjam chaos -h` print.
const usage = chaosUsage + "\n" + mergeUsage + "\nusage: " + replayUsage + "\n" + listUsage + `

  logjam chaos    run every family with a profile from ginkgo.yml; print the matrix,
                  write reports/ (matrix.json, junit.xml, matrix.html, matrix.md).
                  Ctrl-C stops the run within seconds: the cells that ran are kept,
                  the ones cut short are INTERRUPTED, the ones never started are
                  NOTRUN rows, nothing is left running, and the exit status is 130.
                  A second Ctrl-C kills the families at once.
  logjam report   re-render, merge or compare reports directories
  logjam replay   run a failed cell's evidence bundle again, exactly, without Ginkgo
  logjam list     print every cell's name (what -focus matches), without running any
  logjam calibrate  your own sink (docs/SINK.md) played on real CPython, beside the built-in policies
  logjam doctor   which optional tools and interpreters the suite can use here
  logjam version  the module, its commit and the Go toolchain that built this logjam
  logjam test     go test ./... (or your go test arguments), saying what it does meanwhile
  logjam ginkgo   go tool ginkgo, the same; logjam simrt: the child, run by hand

  Each command's own -h describes its flags.

environment: LOGJAM_PROFILE (local, nightly, focus), LOGJAM_TIMEOUT_SCALE (a finite
number above 0), LOGJAM_SEED (a whole number). GO_FAILPOINTS is refused: every cell
sets its own (simrt -list names the points).
`

// isHelp reports whether arg asks for the usage text.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// wantsHelp reports whether any argument asks for the usage text.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

// printUsage prints the usage text to w; exit status 0.
func printUsage(w io.Writer) int {
	Usage(w)
	return 0
}

// Usage prints the runner's commands and every logjam chaos flag.
func Usage(w io.Writer) {
	fmt.Fprint(w, usage)
	fs, _ := newChaosFlags()
	fmt.Fprintln(w, "\nlogjam chaos flags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// checkFocus refuses a -focus that is not a regular expression, which
// Ginkgo would otherwise find in every family after the build.
func checkFocus(focus string) error {
	if _, err := regexp.Compile(focus); err != nil {
		return fmt.Errorf("-focus %q is not a regular expression: %v", focus, err)
	}
	return nil
}

// checkLabelFilter refuses what Ginkgo's own parser of --label-filter
// refuses, before anything is built.
func checkLabelFilter(filter string) error {
	if filter == "" {
		return nil
	}
	if _, err := types.ParseLabelFilter(filter); err != nil {
		// Ginkgo's error is coloured, on several lines, with a link: its
		// words only, on one line.
		msg := ansiEscape.ReplaceAllString(err.Error(), "")
		msg, _, _ = strings.Cut(msg, "Learn more")
		return fmt.Errorf("-label-filter %q is not a Ginkgo label filter: %s", filter, strings.Join(strings.Fields(msg), " "))
	}
	return nil
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// checkAmbientFailpoints refuses a GO_FAILPOINTS in logjam's environment:
// the cells set their own and would silently drop it. A malformed value
// never gets here: package failpoints refuses it before main.
func checkAmbientFailpoints() error {
	if fps := failpoints.Ambient(); fps != nil {
		return fmt.Errorf("GO_FAILPOINTS=%q would apply to no cell: each cell sets its own (accepted: unset; to inject into one child, run simrt by hand)", fps.Env())
	}
	return nil
}
