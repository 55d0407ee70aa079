package report

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"logjam/internal/shard"
)

// Merge joins the reports of shards (each a directory a `logjam chaos
// -shard K/N` run wrote) into out: one matrix, run, JUnit, HTML and
// markdown, with every evidence bundle copied under out/evidence. It
// refuses, before writing anything, what it cannot vouch for: a directory
// given twice, shards of different runs (run id, profile, seed, repeat,
// focus), a shard missing or given twice (K/N for every K of N exactly
// once, N at most shard.Max; an unsharded run alone), a cell in two shards
// or twice in one, a cell the split gives another shard or that is of no
// spec of the run's plan (checkShard), a file or bundle that is not what
// it should be (internal/artifact's rules, ReadBundle's). Each shard's
// files are read as untrusted input. A shard that holds no row for some
// spec the split gives it (an emptied matrix.json) is merged with a row
// that says how many (MergeFamily): the merged run is not green. The
// real-column cells given (ReadRealColumns: the nightly's jobs on other
// interpreters and OSes) join the merged matrix as their own family.
func Merge(out string, dirs []string, real Matrix) (Run, []Cell, error) {
	if len(dirs) == 0 {
		return Run{}, nil, fmt.Errorf("nothing to merge: name the shards' reports directories")
	}
	type shardDir struct {
		dir   string
		run   Run
		cells Matrix
		shard shard.Shard
	}
	var shards []shardDir
	byPath := map[string]string{}
	byShard := map[int]string{}
	owner := map[string]string{}
	n := 0
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return Run{}, nil, fmt.Errorf("%s: %v", dir, err)
		}
		if first, ok := byPath[abs]; ok {
			return Run{}, nil, fmt.Errorf("%s is given twice (as %s and %s)", abs, first, dir)
		}
		byPath[abs] = dir
		run, cs, err := ReadDir(dir)
		if err != nil {
			return Run{}, nil, err
		}
		if len(run.Shards) != 1 {
			return Run{}, nil, fmt.Errorf("%s holds %d shards: merge the shards' own directories, one run each", dir, len(run.Shards))
		}
		sh := shard.Shard{K: 1, N: 1}
		if run.Shards[0] != "all" {
			if sh, err = shard.Parse(run.Shards[0]); err != nil {
				return Run{}, nil, fmt.Errorf("%s: run.json: %v", dir, err)
			}
		}
		if len(shards) > 0 {
			f := shards[0]
			switch {
			case run.ID != f.run.ID:
				return Run{}, nil, fmt.Errorf("%s is of run %q, but %s is of run %q: not shards of one run", dir, clip(run.ID), f.dir, clip(f.run.ID))
			case run.Profile != f.run.Profile || run.Seed != f.run.Seed || run.Repeat != f.run.Repeat:
				return Run{}, nil, fmt.Errorf("%s ran profile %s seed %d x%d, but %s ran profile %s seed %d x%d: not shards of one run",
					dir, clip(run.Profile), run.Seed, run.Repeat, f.dir, clip(f.run.Profile), f.run.Seed, f.run.Repeat)
			case run.Focus != f.run.Focus:
				return Run{}, nil, fmt.Errorf("%s ran focus %q, but %s ran focus %q: not shards of one run", dir, clip(run.Focus), f.dir, clip(f.run.Focus))
			case sh.N != n:
				return Run{}, nil, fmt.Errorf("%s is shard %s, but %s is shard %s: not shards of one split", dir, run.Shards[0], f.dir, f.run.Shards[0])
			}
		} else if run.ID == "" {
			return Run{}, nil, fmt.Errorf("%s: run.json names no run id: it cannot be vouched for as a shard of a run", dir)
		}
		n = sh.N
		if other, ok := byShard[sh.K]; ok {
			return Run{}, nil, fmt.Errorf("shard %s appears twice (in %s and %s)", run.Shards[0], other, dir)
		}
		byShard[sh.K] = dir
		for _, c := range cs {
			key := fmt.Sprintf("%s\x00%s\x00%d", c.Family, c.Name, c.Repeat)
			if o, ok := owner[key]; ok {
				if o == dir {
					return Run{}, nil, fmt.Errorf("%s holds cell %q (repeat %d) twice", dir, clip(c.Name), c.Repeat)
				}
				return Run{}, nil, fmt.Errorf("cell %q is in both %s and %s: shards must not overlap", clip(c.Name), o, dir)
			}
			owner[key] = dir
		}
		shards = append(shards, shardDir{dir, run, cs, sh})
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := byShard[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return Run{}, nil, fmt.Errorf("shard(s) %s missing: a merge of part of a run cannot say the run was as expected", strings.Join(missing, ", "))
	}
	slices.SortFunc(shards, func(a, b shardDir) int { return a.shard.K - b.shard.K })

	// What each shard holds, against the split of the run's plan: every
	// shard's report names every spec of the run (those it left to the
	// others too), so the union is the plan even when one shard's is
	// emptied.
	plan := map[PlannedSpec]bool{}
	for _, sd := range shards {
		for _, ps := range sd.run.Plan {
			plan[PlannedSpec{Family: ps.Family, Spec: ps.Spec}] = true
		}
	}
	if len(plan) == 0 {
		return Run{}, nil, fmt.Errorf("no shard's %s names the specs of its run (its plan): there is nothing to check the shards' cells against (written by an older logjam? run the shards again)", RunFile)
	}
	var missingRows []Cell
	for _, sd := range shards {
		row, err := checkShard(sd.dir, sd.run, sd.cells, sd.shard, plan)
		if err != nil {
			return Run{}, nil, err
		}
		if row != nil {
			missingRows = append(missingRows, *row)
		}
	}

	merged := shards[0].run
	merged.Shards, merged.Plan, merged.NoCell = nil, nil, nil
	var cells []Cell
	var copies [][2]string // shard folder, bundle: each checked before anything is written
	for _, sd := range shards {
		merged.Shards = append(merged.Shards, sd.run.Shards...)
		merged.Plan = append(merged.Plan, sd.run.Plan...)
		merged.NoCell = append(merged.NoCell, sd.run.NoCell...)
		merged.Seconds = max(merged.Seconds, sd.run.Seconds)
		if sd.run.Started.Before(merged.Started) {
			merged.Started = sd.run.Started
		}
		for _, c := range sd.cells {
			if c.Bundle != "" {
				b, err := copyBundle(sd.dir, c.Bundle, out, false)
				if err != nil {
					return Run{}, nil, err
				}
				copies = append(copies, [2]string{sd.dir, c.Bundle})
				c.Bundle = b
			}
			cells = append(cells, c)
		}
	}
	merged.Plan, merged.NoCell = Unique(merged.Plan), Unique(merged.NoCell)
	cells = append(cells, missingRows...)
	cells = append(cells, real...)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Run{}, nil, err
	}
	for _, cp := range copies {
		if _, err := copyBundle(cp[0], cp[1], out, true); err != nil {
			return Run{}, nil, err
		}
	}
	return merged, cells, WriteAll(out, merged, cells)
}

// MergeFamily is the family of the rows merge adds: one per shard that
// holds no row for some spec the split gives it (ID MissingID).
const (
	MergeFamily = "merge"
	MissingID   = "missing"
)

// checkShard checks one shard's rows against the split of the plan: each
// row of a spec is of a spec of the plan, names it (the spec's full text
// ends with the cell's name), and belongs to this shard (shard.Has), and
// so does each spec it says passed without a row; a row of no spec is
// only a failure's (a build, a suite); a row's repeat is one of the run's.
// Anything else is refused. Each spec of the plan the split gives the
// shard must have, in every repeat of the run, a row or be among those
// that passed without one (a NOTRUN row, of no repeat, stands for all):
// when some have neither, the shard's missing row says how many, and it
// is not as expected.
func checkShard(dir string, run Run, cells Matrix, sh shard.Shard, plan map[PlannedSpec]bool) (*Cell, error) {
	owner := func(spec string) string {
		for k := 1; k <= sh.N; k++ {
			if (shard.Shard{K: k, N: sh.N}).Has(spec) {
				return shard.Shard{K: k, N: sh.N}.String()
			}
		}
		return "none"
	}
	repeats := max(run.Repeat, 1)
	accounted := map[PlannedSpec]bool{} // by repeat; repeat 0: every repeat
	for _, c := range cells {
		if c.Spec == "" {
			if c.Observed == SpecFail {
				continue // a build's, a suite's or a setup's failure: red on its own
			}
			return nil, fmt.Errorf("%s: cell %q (%s) names no spec, so it cannot be checked against the split (written by an older logjam? run the shard again)", dir, clip(c.Name), clip(c.Family))
		}
		ps := PlannedSpec{Family: c.Family, Spec: c.Spec}
		switch {
		case c.Repeat < 0 || c.Repeat > repeats:
			return nil, fmt.Errorf("%s: cell %q is of repeat %d, but the run has %d", dir, clip(c.Name), c.Repeat, repeats)
		case !plan[ps]:
			return nil, fmt.Errorf("%s: cell %q (%s) is of no spec of the run's plan", dir, clip(c.Name), clip(c.Family))
		case c.Spec != c.Name && !strings.HasSuffix(c.Spec, " "+c.Name):
			return nil, fmt.Errorf("%s: cell %q says it is of spec %q, which names another cell", dir, clip(c.Name), clip(c.Spec))
		case !sh.Has(c.Spec):
			return nil, fmt.Errorf("%s is shard %s, but holds cell %q (%s), which the split gives to shard %s", dir, sh, clip(c.Name), clip(c.Family), owner(c.Spec))
		}
		ps.Repeat = c.Repeat
		accounted[ps] = true
	}
	for _, ps := range run.NoCell {
		switch {
		case ps.Repeat < 1 || ps.Repeat > repeats:
			return nil, fmt.Errorf("%s: %s says spec %q passed without a row in repeat %d, but the run has %d", dir, RunFile, clip(ps.Spec), ps.Repeat, repeats)
		case !plan[PlannedSpec{Family: ps.Family, Spec: ps.Spec}]:
			return nil, fmt.Errorf("%s: %s says spec %q (%s) passed without a row, but it is no spec of the run's plan", dir, RunFile, clip(ps.Spec), clip(ps.Family))
		case !sh.Has(ps.Spec):
			return nil, fmt.Errorf("%s is shard %s, but %s says spec %q (%s) of shard %s passed there", dir, sh, RunFile, clip(ps.Spec), clip(ps.Family), owner(ps.Spec))
		}
		accounted[ps] = true
	}
	var missing []PlannedSpec // a spec once per repeat it lacks
	own := 0
	for ps := range plan {
		if !sh.Has(ps.Spec) {
			continue
		}
		own++
		for r := 1; r <= repeats; r++ {
			if !accounted[ps] && !accounted[PlannedSpec{Family: ps.Family, Spec: ps.Spec, Repeat: r}] {
				missing = append(missing, PlannedSpec{Family: ps.Family, Spec: ps.Spec, Repeat: r})
			}
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	missing = Unique(missing)
	name := fmt.Sprintf("shard %s (%s)", sh, dir)
	what := fmt.Sprintf("%d of the %d specs (cells and random runs) the split gives it, so %d are missing", len(missing), own, len(missing))
	if repeats > 1 {
		what = fmt.Sprintf("%d of the %d runs of specs (%d specs, cells and random runs, x %d repeats) the split gives it, so %d are missing", len(missing), own*repeats, own, repeats, len(missing))
	}
	row := SpecRow(MergeFamily, MissingID, name, fmt.Sprintf("%s holds no row for %s (the first: %s: %s, repeat %d): the merged run is not green",
		name, what, missing[0].Family, clip(missing[0].Spec), missing[0].Repeat))
	return &row, nil
}

// copyBundle copies the bundle a shard recorded (by its name under the
// shard's evidence directory: paths recorded on another runner mean
// nothing here) into out/evidence and returns its new path. The bundle is
// read as untrusted input (ReadBundle's rules: a folder of the bundle's
// regular files, no symlink followed, each within its size, its records
// strict and valid), and its files are written anew: nothing outside it
// is read or copied.
func copyBundle(dir, bundle, out string, write bool) (string, error) {
	name := filepath.Base(bundle)
	if !bundleName().MatchString(name) || name == "." || name == ".." {
		return "", fmt.Errorf("%s: matrix.json names bundle %q, not a bundle's folder name", dir, clip(name))
	}
	src := filepath.Join(dir, EvidenceDir, name)
	dst := filepath.Join(out, EvidenceDir, name)
	for _, p := range []string{filepath.Join(dir, EvidenceDir), src} {
		st, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return bundle + " (not in " + dir + ")", nil
		}
		if err != nil {
			return "", err
		}
		if !st.IsDir() {
			return "", fmt.Errorf("%s is not a folder (%s): an evidence bundle is a folder of regular files", p, st.Mode().Type())
		}
	}
	if filepath.Clean(src) == filepath.Clean(dst) {
		return dst, nil
	}
	files, err := bundleFiles(src)
	if err == nil {
		_, err = parseBundle(files)
	}
	if err != nil {
		return "", fmt.Errorf("%s is not an evidence bundle: %v", src, err)
	}
	if !write {
		return dst, nil
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if err := writeFile(filepath.Join(dst, f), files[f]); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// bundleName is what BundleDir makes of a cell's name (and its .rN).
var bundleName = lazyRegexp(`^[A-Za-z0-9._=-]{1,255}$`)
