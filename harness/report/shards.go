package report

import (
	"fmt"
	"io/fs"
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
	for _, sd := range shards {
		merged.Shards = append(merged.Shards, sd.run.Shards...)
		merged.Seconds = max(merged.Seconds, sd.run.Seconds)
		if sd.run.Started.Before(merged.Started) {
			merged.Started = sd.run.Started
		}
		for _, c := range sd.cells {
			if c.Bundle != "" {
				b, err := copyBundle(sd.dir, c.Bundle, out)
				if err != nil {
					return Run{}, nil, err
				}
				c.Bundle = b
			}
			cells = append(cells, c)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Run{}, nil, err
	}
	return merged, cells, WriteAll(out, merged, cells)
}

// copyBundle copies the bundle a shard recorded (by its name under the
// shard's evidence directory: paths recorded on another runner mean
// nothing here) into out/evidence and returns its new path.
func copyBundle(dir, bundle, out string) (string, error) {
	name := filepath.Base(bundle)
	src := filepath.Join(dir, EvidenceDir, name)
	dst := filepath.Join(out, EvidenceDir, name)
	if _, err := os.Stat(src); err != nil {
		return bundle + " (not in " + dir + ")", nil
	}
	if filepath.Clean(src) == filepath.Clean(dst) {
		return dst, nil
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		to := filepath.Join(dst, strings.TrimPrefix(p, src))
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	return dst, err
}
