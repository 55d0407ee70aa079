package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/internal/scratch"
)

// ginkgoVersionStub makes a scratch folder holding a `go` that answers the
// one question Ginkgo's CLI asks the go command before it runs a compiled
// suite, and hands everything else to the go command itself: `go list -m
// github.com/onsi/ginkgo/v2`, asked in every suite's folder to warn of a
// CLI and a library of different versions. logjam chaos runs the CLI of
// this module's go.mod (go tool ginkgo) on suites built from the same
// go.mod, and links that same Ginkgo itself, so the answer is known here
// (types.VERSION); the go command took 30-40 ms of CPU to give it, eleven
// times a run, each before its family could start. Put first on a family's
// PATH; remove it when the run ends (a killed run's is swept by the next).
func ginkgoVersionStub(base string) (dir string, remove func(), err error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", func() {}, err
	}
	if goBin, err = filepath.Abs(goBin); err != nil {
		return "", func() {}, err
	}
	scratch.Sweep(base, "gostub")
	scr, err := scratch.New(base, "gostub")
	if err != nil {
		return "", func() {}, err
	}
	script := fmt.Sprintf(`#!/bin/sh
# logjam chaos: Ginkgo's version check, answered without the go command
# (harness/runner/gostub.go); anything else is the go command's.
if [ "$#" = 3 ] && [ "$1" = list ] && [ "$2" = -m ] && [ "$3" = github.com/onsi/ginkgo/v2 ]; then
	echo 'github.com/onsi/ginkgo/v2 v%s'
	exit 0
fi
exec '%s' "$@"
`, types.VERSION, strings.ReplaceAll(goBin, "'", `'\''`))
	if err := os.WriteFile(filepath.Join(scr.Dir, "go"), []byte(script), 0o755); err != nil {
		scr.Remove()
		return "", func() {}, err
	}
	return scr.Dir, scr.Remove, nil
}
