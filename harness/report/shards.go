package report

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"logjam/internal/shard"
)

// Merge joins the reports of shards (each a directory a `logjam chaos
// -shard K/N` run wrote) into out: one matrix, run, JUnit, HTML and
// markdown, with every evidence bundle copied under out/evidence. It
// refuses, before writing anything, what it cannot vouch for: a directory
// given twice, shards of different runs (run id, profile, seed, repeat),
// a shard missing or given twice (K/N for every K of N exactly once; an
// unsharded run alone), a cell in two shards or twice in one.
func Merge(out string, dirs []string) (Run, []Cell, error) {
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
			return Run{}, nil, fmt.Errorf("%s holds shards %v: merge the shards' own directories, one run each", dir, run.Shards)
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
				return Run{}, nil, fmt.Errorf("%s is of run %q, but %s is of run %q: not shards of one run", dir, run.ID, f.dir, f.run.ID)
			case run.Profile != f.run.Profile || run.Seed != f.run.Seed || run.Repeat != f.run.Repeat:
				return Run{}, nil, fmt.Errorf("%s ran profile %s seed %d x%d, but %s ran profile %s seed %d x%d: not shards of one run",
					dir, run.Profile, run.Seed, run.Repeat, f.dir, f.run.Profile, f.run.Seed, f.run.Repeat)
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
					return Run{}, nil, fmt.Errorf("%s holds cell %q (repeat %d) twice", dir, c.Name, c.Repeat)
				}
				return Run{}, nil, fmt.Errorf("cell %q is in both %s and %s: shards must not overlap", c.Name, o, dir)
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

	merged := shards[0].run
	merged.Shards = nil
	var cells []Cell
	var copies [][2]string // shard folder, bundle: each checked before anything is written
	for _, sd := range shards {
		merged.Shards = append(merged.Shards, sd.run.Shards...)
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

// copyBundle copies the bundle a shard recorded (by its name under the
// shard's evidence directory: paths recorded on another runner mean
// nothing here) into out/evidence and returns its new path. The bundle is
// read as untrusted input (ReadBundle's rules: a folder of the bundle's
// regular files, no symlink followed, each within its size, its records
// strict and valid), and its files are written anew: nothing outside it
// is read or copied.
func copyBundle(dir, bundle, out string, write bool) (string, error) {
	name := filepath.Base(bundle)
	if !bundleName.MatchString(name) || name == "." || name == ".." {
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
		if err := os.WriteFile(filepath.Join(dst, f), files[f], 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// bundleName is what BundleDir makes of a cell's name (and its .rN).
var bundleName = regexp.MustCompile(`^[A-Za-z0-9._=-]{1,255}$`)
