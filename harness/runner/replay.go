package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/internal/childbin"
	"logjam/internal/config"
	"logjam/verdict"
)

const replayUsage = "logjam replay [-n N] BUNDLE_DIR (a cell's evidence bundle, reports/evidence/<cell>)"

// replayCmd runs a bundle's cell again as it ran: the same child binary
// (kept by digest, or rebuilt from the module's source, saying whether the
// rebuild is the same binary), the same fd-2 arrangement, signals and
// SIGINT disposition (the scenario's contract), the same failpoints and
// profile. It prints each replay's verdict beside the recorded one and
// exits 0 when every replay observed the recorded verdict, 1 when one did
// not, 130 when interrupted, 2 for bad input (nothing run).
func replayCmd(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("n", 1, "replay the cell this many times")
	if err := fs.Parse(args); err != nil {
		return fail("replay: %v (usage: %s)", err, replayUsage)
	}
	if fs.NArg() != 1 || *n < 1 {
		return fail("replay: want one bundle directory and -n of at least 1 (usage: %s)", replayUsage)
	}
	dir := fs.Arg(0)
	b, err := report.ReadBundle(dir)
	if err != nil {
		return fail("replay: %s is not an evidence bundle: %v", dir, err)
	}
	if b.Replay == nil {
		return fail("replay: no child ran for %s (%s); rerun it in its suite: %s", b.Cell.Name, b.Cell.Evidence.Reason, b.Cell.Rerun)
	}
	spec, err := cell.SpecOf(*b.Replay)
	if err != nil {
		return fail("replay: %s: %v", filepath.Join(dir, report.ReplayRecordFile), err)
	}
	bin, err := replayBinary(w, b.Replay)
	if err != nil {
		return fail("replay: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	differed := 0
	for i := 1; i <= *n; i++ {
		out, err := cell.Run(ctx, bin, spec, b.Replay.Profile)
		if err != nil {
			out = cell.Errored(spec, err)
		}
		if out.Observed == verdict.Interrupted {
			fmt.Fprintf(w, "replay %d/%d of %s: interrupted\n", i, *n, b.Cell.Name)
			return 130
		}
		same := "the same"
		if out.Observed != b.Cell.Observed {
			same, differed = "DIFFERENT", differed+1
		}
		fmt.Fprintf(w, "replay %d/%d of %s: observed %s, recorded %s (expected %s): %s\n  reason: %s\n",
			i, *n, b.Cell.Name, out.Observed, b.Cell.Observed, b.Cell.Expected, same, out.Reason)
	}
	fmt.Fprintf(w, "%d replays, %d observed the recorded verdict, %d did not\n", *n, *n-differed, differed)
	if differed > 0 {
		return 1
	}
	return 0
}

// replayBinary is the child binary the bundle's cell ran: the kept one, or
// one rebuilt from the module the bundle names (or the one this command
// runs in), saying whether it is the same binary.
func replayBinary(w io.Writer, r *report.Replay) (string, error) {
	if p, ok := childbin.Lookup(r.Binary); ok {
		return p, nil
	}
	root := r.Module
	if _, err := os.Stat(filepath.Join(root, "go.mod")); root == "" || err != nil {
		wd, _ := os.Getwd()
		cfg, err := config.Find(wd)
		if err != nil {
			return "", errors.New("the child binary the cell ran is not kept, and there is no logjam module here to rebuild it from")
		}
		root = filepath.Dir(cfg)
	}
	bin, built, same, err := childbin.Resolve(root, r.Binary)
	if err != nil {
		return "", err
	}
	if same {
		fmt.Fprintf(w, "logjam: replay: the child binary was not kept; rebuilt from %s: the same binary (sha256 %.12s)\n", root, built)
	} else {
		fmt.Fprintf(w, "logjam: replay: the child binary the cell ran (sha256 %.12s) was not kept; rebuilt from %s, a different binary (sha256 %.12s): the sources changed since\n", r.Binary, root, built)
	}
	return bin, nil
}
