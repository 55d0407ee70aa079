package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"logjam/calibrate"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/internal/childbin"
	"logjam/internal/config"
	"logjam/internal/textout"
	"logjam/verdict"
)

const replayUsage = "logjam replay [-n N] [-source DIR] [-sink FILE.cpp] BUNDLE_DIR (a cell's evidence bundle, reports/latest/evidence/<cell>)"

// replayCmd runs a bundle's cell again as it ran: the same child binary
// (kept by digest, or rebuilt from this module's source, saying whether the
// rebuild is the same binary), the same fd-2 arrangement, signals and
// SIGINT disposition (the scenario's contract), the same failpoints and
// profile. It prints each replay's verdict beside the recorded one and
// exits 0 when every replay observed the recorded verdict, 1 when one did
// not, 130 when interrupted, 2 for bad input (nothing run).
//
// A bundle is untrusted input (it travels: a CI artifact, an attachment):
// report.ReadBundle checks it whole before anything runs, and the only
// binary replay runs is one whose SHA-256 it has just computed, from the
// cache or built from the logjam checkout the user chose: the one replay
// runs in, unless that checkout contains the bundle (a received folder
// laid out around it as a module would be built and run), or the one
// -source names; a bundle names neither a path nor a module.
func replayCmd(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("n", 1, "replay the cell this many times")
	sinkFile := fs.String("sink", "", "a cell of logjam calibrate -sink: your sink's file, built again once it hashes to what the bundle recorded")
	source := fs.String("source", "", "the logjam checkout to rebuild the child from when its binary is not kept (default: the one replay runs in, unless it contains the bundle)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return subUsage(w, "usage: "+replayUsage, fs)
	} else if err != nil {
		return fail("replay: %v (usage: %s)", err, replayUsage)
	}
	if fs.NArg() != 1 || *n < 1 {
		return fail("replay: want one bundle directory and -n of at least 1 (usage: %s)", replayUsage)
	}
	dir := fs.Arg(0)
	b, err := report.ReadBundle(dir)
	if err != nil {
		return fail("replay: %s is not an evidence bundle: %s", oneLine(dir), oneLine(err.Error()))
	}
	if b.Replay == nil && b.Cell.Family == "sink" {
		if *sinkFile != "" {
			return calibrate.ReplaySink(w, b.Cell, *sinkFile, *n)
		}
		rerun := report.RerunOf(b.Cell) // built from validated fields, never the bundle's own text
		if rerun == "" {
			rerun = "logjam calibrate -sink"
		}
		return fail("replay: %s is a real cell of your sink (%s): a bundle carries no code to build; name your sink's file, checked against the source the cell was played with: logjam replay -sink FILE.cpp %s (or play the row again: %s)", oneLine(b.Cell.Name), oneLine(b.Cell.Evidence.Reason), oneLine(dir), rerun)
	}
	if b.Replay == nil {
		rerun := report.RerunOf(b.Cell) // built from validated fields, never the bundle's own text
		if rerun == "" {
			rerun = "(the bundle records no command logjam writes)"
		}
		return fail("replay: no child ran for %s (%s); rerun it in its suite: %s", oneLine(b.Cell.Name), oneLine(b.Cell.Evidence.Reason), oneLine(rerun))
	}
	spec, err := cell.SpecOf(*b.Replay)
	if err != nil {
		return fail("replay: %s: %s", report.ReplayRecordFile, oneLine(err.Error()))
	}
	root, rootErr := replaySource(*source, dir)
	if *source != "" && rootErr != nil {
		return fail("replay: -source: %s", oneLine(rootErr.Error()))
	}
	if rootErr == nil {
		if err := checkReplayRoot(root, dir, b.Replay.Profile.Name); err != nil {
			return fail("replay: %s", oneLine(err.Error()))
		}
	}
	v, err := replayBinary(w, b.Replay, root, rootErr)
	if err != nil {
		return fail("replay: %s", oneLine(err.Error()))
	}
	defer v.Remove()
	bin := v.Path
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	name := oneLine(b.Cell.Name)
	differed := 0
	for i := 1; i <= *n; i++ {
		out, err := cell.Run(ctx, bin, spec, b.Replay.Profile)
		if err != nil {
			out = cell.Errored(spec, err)
		}
		if out.Observed == verdict.Interrupted {
			fmt.Fprintf(w, "replay %d/%d of %s: interrupted\n", i, *n, name)
			return 130
		}
		same := "the same"
		if out.Observed != b.Cell.Observed {
			same, differed = "DIFFERENT", differed+1
		}
		fmt.Fprintf(w, "replay %d/%d of %s: observed %s, recorded %s (expected %s): %s\n  reason: %s\n",
			i, *n, name, out.Observed, oneLine(string(b.Cell.Observed)), oneLine(string(b.Cell.Expected)), same, out.Reason)
	}
	fmt.Fprintf(w, "%d replays, %d observed the recorded verdict, %d did not\n", *n, *n-differed, differed)
	if differed > 0 {
		return 1
	}
	return 0
}

// replaySource is the checkout a rebuild may come from: the one named
// (which must be a logjam checkout), or the one replay runs in, unless it
// contains the bundle: found by walking up from a received folder, it
// would be the sender's (TestReplayNeverBuildsTheFolderAroundABundle).
func replaySource(named, bundle string) (string, error) {
	if named != "" {
		abs, err := filepath.Abs(named)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(filepath.Join(abs, config.FileName)); err != nil {
			return "", fmt.Errorf("%s is not a logjam checkout (no %s)", named, config.FileName)
		}
		return abs, nil
	}
	root, err := config.Root()
	if err != nil {
		return "", err
	}
	if inside(bundle, root) {
		return "", fmt.Errorf("the module found here (%s) contains the bundle, so it may be the sender's; name your own logjam checkout with -source DIR", root)
	}
	return root, nil
}

// inside reports whether path lies in dir or is dir (symlinks resolved).
func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	if err1 == nil {
		p, err1 = filepath.EvalSymlinks(p)
	}
	d, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil {
		return true // unresolvable: assume the worst
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkReplayRoot refuses a module that lies inside the bundle (replay
// run from within a received folder that carries its own go.mod and
// ginkgo.yml would build the sender's code) and a profile this module's
// ginkgo.yml does not name.
func checkReplayRoot(root, bundle, profile string) error {
	if inside(root, bundle) {
		return fmt.Errorf("the module here (%s) is inside the bundle: run logjam replay from your own logjam checkout", root)
	}
	if _, err := config.Load(filepath.Join(root, config.FileName), profile); err != nil {
		return fmt.Errorf("%s: profile %q is not one of this module's", report.ReplayRecordFile, profile)
	}
	return nil
}

// replayBinary is a private copy of the child binary the bundle's cell
// ran, made by the read that hashed it (so what runs, every replay of -n,
// is what was verified): the kept one, or one rebuilt from the checkout at
// root, saying which and whether it is the same binary.
func replayBinary(w io.Writer, r *report.Replay, root string, rootErr error) (childbin.Verified, error) {
	v, err := childbin.LookupVerified(r.Binary)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, childbin.ErrNotKept) {
		return childbin.Verified{}, err
	}
	if rootErr != nil {
		return childbin.Verified{}, fmt.Errorf("the child binary the cell ran is not kept, and there is no checkout to rebuild it from: %v", rootErr)
	}
	bin, built, err := childbin.Build(root)
	if err != nil {
		return childbin.Verified{}, err
	}
	if v, err = childbin.VerifiedCopy(bin, built); err != nil {
		return childbin.Verified{}, err
	}
	if built == r.Binary {
		fmt.Fprintf(w, "logjam: replay: the child binary was not kept; rebuilt from the checkout %s: the same binary (sha256 %.12s)\n", root, built)
	} else {
		fmt.Fprintf(w, "logjam: replay: the child binary the cell ran (sha256 %.12s) was not kept; rebuilt from %s, a different binary (sha256 %.12s): the sources changed since\n", r.Binary, root, built)
	}
	return v, nil
}

// oneLine keeps untrusted text on one line of the terminal, sending no
// escape sequence (textout.Terminal).
func oneLine(s string) string { return textout.Terminal(s) }
