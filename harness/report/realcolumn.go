package report

import (
	"fmt"
	"path/filepath"
	"slices"

	"logjam/internal/axes"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/verdict"
)

// CalibrationFile is the matrix a real-column run writes (calibrate's
// report: each row's simulated verdict beside the real one), in the folder
// the nightly's calibrate job uploads.
const CalibrationFile = "calibration.json"

// RealFamily is the family of a real-column cell.
const RealFamily = "calibrate"

var realVersion = lazyRegexp(`^[0-9]{1,2}\.[0-9]{1,3}(\.[0-9]{1,3})?$`)

// ReadRealColumns reads the real-column reports in dirs (each a folder
// holding CalibrationFile, another runner's upload) as untrusted input:
// each cell must be a real-column cell of a known row and policy, its
// verdicts words of the vocabulary and its interpreters versions; no cell
// may come twice, in one folder or across them. A bundle path is dropped:
// the real column's bundles stay in its own upload. Anything else refuses
// the lot, in one line.
func ReadRealColumns(dirs []string) (Matrix, error) {
	var all Matrix
	seen := map[string]string{}
	for _, dir := range dirs {
		m, err := ReadMatrix(filepath.Join(dir, CalibrationFile))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: %s holds no cell", dir, CalibrationFile)
		}
		for _, c := range m {
			if err := checkRealCell(c); err != nil {
				return nil, fmt.Errorf("%s: %s: cell %q: %v", dir, CalibrationFile, clip(c.Name), err)
			}
			key := fmt.Sprintf("%s\x00%d", c.Name, c.Repeat)
			if o, ok := seen[key]; ok {
				return nil, fmt.Errorf("real cell %q is in both %s and %s", clip(c.Name), o, dir)
			}
			seen[key] = dir
			c.Bundle = ""
			all = append(all, c)
		}
	}
	all.Sort()
	return all, nil
}

// checkRealCell says what is wrong with a cell of a real column, or nil.
func checkRealCell(c Cell) error {
	switch {
	case c.Family != RealFamily:
		return fmt.Errorf("family %q, not %s", clip(c.Family), RealFamily)
	case c.Name == "" || len(c.Name) > 200:
		return fmt.Errorf("a name of %d bytes", len(c.Name))
	case len(c.Real) == 0:
		return fmt.Errorf("no real verdict")
	case c.Policy != "" && !slices.Contains(axes.Policies, c.Policy):
		return fmt.Errorf("policy %q (accepted: %v)", clip(c.Policy), axes.Policies)
	case !verdict.Known(c.Expected) || !verdict.Known(c.Observed):
		return fmt.Errorf("verdicts %q and %q, not words of the vocabulary", clip(string(c.Expected)), clip(string(c.Observed)))
	}
	if _, err := scenario.Lookup(c.ID); err != nil && schedule.Findings[c.ID].Schedule == "" { // nor a row random search found
		return fmt.Errorf("row %q is no row of the matrix", clip(c.ID))
	}
	for v, r := range c.Real {
		if !realVersion().MatchString(v) {
			return fmt.Errorf("interpreter %q is not a version", clip(v))
		}
		if !verdict.Known(r) {
			return fmt.Errorf("real verdict %q is not a word of the vocabulary", clip(string(r)))
		}
	}
	return nil
}
