package runner

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"logjam/harness/report"
	"logjam/internal/config"
)

// maxRerunCells bounds what -rerun-failed focuses on: past it, a focus of
// every name is no narrower than the matrix, and the file may not be ours.
const maxRerunCells = 500

// errNothingToRerun: the last run had no cell not as expected; -rerun-failed
// says so and runs nothing (exit status 0: nothing is wrong).
var errNothingToRerun = errors.New("nothing to rerun")

// lastRun is the run the newer of reports/latest and reports/latest-focus
// points at (read as untrusted input: report.ReadDir bounds and checks
// it), and its folder.
func lastRun(reports string) (report.Run, report.Matrix, string, error) {
	var best report.Run
	var cells report.Matrix
	dir := ""
	for _, p := range []string{LatestPointer, LatestFocusPointer} {
		d := filepath.Join(reports, p)
		if _, err := os.Stat(d); err != nil {
			continue
		}
		run, m, err := report.ReadDir(d)
		if err != nil {
			return report.Run{}, nil, "", err
		}
		if dir == "" || run.Started.After(best.Started) {
			best, cells, dir = run, m, d
		}
	}
	if dir == "" {
		return report.Run{}, nil, "", fmt.Errorf("-rerun-failed: no run in %s to read (%s or %s; run logjam chaos first)", reports, LatestPointer, LatestFocusPointer)
	}
	return best, cells, dir, nil
}

// rerunSelection is what -rerun-failed runs: the families of the last run's
// cells not as expected, and a focus matching exactly their names (quoted,
// as report.Rerun quotes one). Names of families this tree does not have
// are refused, never run: the file is read from disk.
func rerunSelection(cells report.Matrix, families []string) (only []string, focus string, n int, err error) {
	var names []string
	for _, c := range cells {
		if c.AsExpected() {
			continue
		}
		if !slices.Contains(families, c.Family) {
			return nil, "", 0, fmt.Errorf("-rerun-failed: the last run's cell %.80q is of family %.40q, which this tree does not have (accepted: %s)", c.Name, c.Family, strings.Join(families, ", "))
		}
		if !slices.Contains(only, c.Family) {
			only = append(only, c.Family)
		}
		names = append(names, regexp.QuoteMeta(c.Name))
	}
	if len(names) == 0 {
		return nil, "", 0, errNothingToRerun
	}
	if len(names) > maxRerunCells {
		return nil, "", 0, fmt.Errorf("-rerun-failed: %d cells were not as expected (accepted: up to %d; rerun the whole matrix)", len(names), maxRerunCells)
	}
	slices.Sort(only)
	slices.Sort(names)
	names = slices.Compact(names)
	return only, strings.Join(names, "|"), len(names), nil
}

// pickFailed sets what -rerun-failed runs (rerunSelection) from the last
// run, with that run's profile and seed unless -profile (or LOGJAM_PROFILE)
// or LOGJAM_SEED names others; repeat is -repeat (0: the profile's).
func (o *chaosOptions) pickFailed(fs *flag.FlagSet, anyFamily bool, out string, repeat int) error {
	if o.selects() || anyFamily || !o.shard.All() || out != "" {
		return errors.New("-rerun-failed picks the cells itself (accepted with it: -profile, -repeat, -procs, -slots, -keep-bundles, -v; not -focus, -label-filter, -shard, -out or a FAMILY)")
	}
	reports := filepath.Join(o.root, "reports")
	run, cells, dir, err := lastRun(reports)
	if err != nil {
		return err
	}
	fams, err := families(o.root)
	if err != nil {
		return err
	}
	where := dir
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		if rel, err := filepath.Rel(o.root, d); err == nil {
			where = rel
		}
	}
	only, focus, n, err := rerunSelection(cells, fams)
	if errors.Is(err, errNothingToRerun) {
		return fmt.Errorf("%w: every cell of the last run (%s) came out as expected", errNothingToRerun, where)
	}
	if err != nil {
		return err
	}
	profileGiven := os.Getenv("LOGJAM_PROFILE") != ""
	fs.Visit(func(f *flag.Flag) { profileGiven = profileGiven || f.Name == "profile" })
	if !profileGiven && run.Profile != "" && run.Profile != o.prof.Name {
		cfgPath, err := config.Find(o.root)
		if err != nil {
			return err
		}
		if o.prof, err = config.Load(cfgPath, run.Profile); err != nil {
			return fmt.Errorf("-rerun-failed: the last run's profile: %v", err)
		}
		if repeat > 0 {
			o.prof.Repeat = repeat
		}
	}
	if os.Getenv("LOGJAM_SEED") == "" && run.Seed != 0 {
		o.prof.Seed = run.Seed
	}
	o.only, o.focus = only, focus
	o.rerun = fmt.Sprintf("logjam: -rerun-failed: the %d cells of %s not as expected in %s (profile %s, seed %d)", n, strings.Join(only, ", "), where, o.prof.Name, o.prof.Seed)
	return nil
}
