package runner

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"logjam/internal/config"
)

const listUsage = "usage: logjam list [-focus REGEXP] [-label-filter EXPR] [-expected] [FAMILY...]"

// listCmd is logjam list: every cell's name, one per line after its
// family, as -focus (and go tool ginkgo --focus) match them, read from the
// compiled suites by Ginkgo's dry run; nothing runs. Progress goes to
// stderr, so that stdout is the list alone.
func listCmd(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	focus := fs.String("focus", "", "only the cells whose names match this regular expression")
	labels := fs.String("label-filter", "", "only the specs whose labels match this Ginkgo label filter (a cell's expected verdict is its label set expect, e.g. 'expect: containsAny {HANG}')")
	expected := fs.Bool("expected", false, "after each cell's name, its expected verdict (a spec that is no cell: -)")
	only, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return subUsage(w, listUsage, fs)
	} else if err != nil {
		return fail("list: %v (%s)", err, listUsage)
	}
	if err := checkFocus(*focus); err != nil {
		return fail("list: %v", err)
	}
	if err := checkLabelFilter(*labels); err != nil {
		return fail("list: %v", err)
	}
	wd, _ := os.Getwd()
	cfgPath, err := config.Find(wd)
	if err != nil {
		return fail("%v", err)
	}
	o := chaosOptions{root: filepath.Dir(cfgPath), focus: *focus, labels: *labels}
	if o.prof, err = config.Load(cfgPath, envOr("LOGJAM_PROFILE", "local")); err != nil {
		return fail("%v", err)
	}
	fams, err := families(o.root)
	if err != nil {
		return fail("%v", err)
	}
	if len(only) > 0 {
		for _, f := range only {
			if !contains(fams, f) {
				return fail("list: no family %q (accepted: %s)", f, strings.Join(fams, ", "))
			}
		}
		fams = only
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := newStopper(cancel, os.Stderr)
	defer st.close()
	started := time.Now()
	fmt.Fprintf(os.Stderr, "logjam: building %d suites and the child (cached per state of the sources; the first build takes a minute or more)...\n", len(fams))
	stopTicker := buildTicker(os.Stderr, "the suites and the child")
	bins, cleanup, _, err := buildSuites(ctx, o.root, fams, func(string, string) {})
	stopTicker()
	defer cleanup()
	if err != nil {
		return fail("%v", err)
	}
	n := 0
	for _, fam := range fams {
		names, err := plannedSpecs(ctx, o, fam, bins[fam], os.Environ(), st)
		if err != nil {
			return fail("list %s: %v", fam, err)
		}
		for _, sp := range names {
			if !*expected {
				fmt.Fprintf(w, "%-9s %s\n", fam, sp.name)
				continue
			}
			fmt.Fprintf(w, "%-9s %s\t%s\n", fam, sp.name, cmp.Or(sp.expected, "-"))
		}
		n += len(names)
	}
	fmt.Fprintf(os.Stderr, "logjam: %d specs in %d families (%.1f s)\n", n, len(fams), time.Since(started).Seconds())
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// subUsage prints one subcommand's usage and flags; exit status 0.
func subUsage(w io.Writer, usage string, fs *flag.FlagSet) int {
	fmt.Fprintln(w, usage)
	if fs != nil {
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	return 0
}
