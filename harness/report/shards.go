package report

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Merge joins the reports of shards (each a directory a `logjam chaos
// -shard K/N` run wrote) into out: one matrix, run, JUnit, HTML and
// markdown, with every evidence bundle copied under out/evidence. Shards
// must share profile and seed and must not hold the same cell twice.
func Merge(out string, dirs []string) (Run, []Cell, error) {
	if len(dirs) == 0 {
		return Run{}, nil, fmt.Errorf("nothing to merge: name the shards' reports directories")
	}
	var merged Run
	var cells []Cell
	owner := map[string]string{}
	for i, dir := range dirs {
		run, cs, err := ReadDir(dir)
		if err != nil {
			return Run{}, nil, err
		}
		if i == 0 {
			merged = run
			merged.Shards = nil
		} else if run.Profile != merged.Profile || run.Seed != merged.Seed || run.Repeat != merged.Repeat {
			return Run{}, nil, fmt.Errorf("%s ran profile %s seed %d x%d, but %s ran profile %s seed %d x%d: not shards of one run",
				dir, run.Profile, run.Seed, run.Repeat, dirs[0], merged.Profile, merged.Seed, merged.Repeat)
		}
		for _, s := range run.Shards {
			if slices.Contains(merged.Shards, s) && s != "all" {
				return Run{}, nil, fmt.Errorf("shard %s appears twice (again in %s)", s, dir)
			}
			merged.Shards = append(merged.Shards, s)
		}
		merged.Seconds = max(merged.Seconds, run.Seconds)
		if run.Started.Before(merged.Started) {
			merged.Started = run.Started
		}
		seen := map[string]bool{}
		for _, c := range cs {
			key := c.Family + "\x00" + c.Name
			if o, ok := owner[key]; ok && o != dir {
				return Run{}, nil, fmt.Errorf("cell %q is in both %s and %s: shards must not overlap", c.Name, o, dir)
			}
			owner[key] = dir
			seen[key] = true
			if c.Bundle != "" {
				b, err := copyBundle(dir, c.Bundle, out)
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
