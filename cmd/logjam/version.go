package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"logjam/internal/config"
)

// version prints what this logjam is: the module and its version, the
// commit it was built from (with "+dirty" when the tree had changes) and
// the Go toolchain. `go tool logjam` builds without VCS stamping, so the
// commit is then the module checkout's, read from git, and said to be.
func version(args []string, w io.Writer) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintf(w, "%s\n  the module and its version, the commit this logjam was built from, the Go toolchain; three lines\n", versionUsage)
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintf(os.Stderr, "logjam: version takes no arguments (%d given)\n", len(args))
		return 2
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(w, "logjam (no build information)")
		return 0
	}
	commit, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	switch {
	case commit == "":
		commit = checkoutCommit()
	case dirty:
		commit += "+dirty"
	}
	fmt.Fprintf(w, "logjam: module %s %s\ncommit %s\n%s\n", bi.Main.Path, bi.Main.Version, commit, bi.GoVersion)
	return 0
}

// checkoutCommit is the HEAD of the checkout that holds the module the go
// command resolves here, or the checkout whose ./logjam ran (config.Checkout)
// when that is none (with "+dirty" for uncommitted changes), or says
// why there is none.
func checkoutCommit() string {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	dir := filepath.Dir(strings.TrimSpace(string(gomod)))
	if strings.TrimSpace(string(gomod)) == os.DevNull {
		dir = "." // no module here: the go command names /dev/null
	}
	if (err != nil || dir == ".") && config.Checkout != "" {
		dir, err = config.Checkout, nil // ./logjam run from another folder: its own checkout
	}
	if err != nil || dir == "." {
		return "unknown (no module here)"
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown (the module is no git checkout)"
	}
	commit := strings.TrimSpace(string(head))
	if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		commit += "+dirty"
	}
	return commit + " (the checkout's HEAD)"
}
