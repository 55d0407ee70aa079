package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"logjam/internal/artifact"
)

// Run is what a chaos run ran with: reports/run.json, beside matrix.json.
type Run struct {
	// ID names the run its shards belong to (logjam chaos -run-id):
	// merge joins only shards of one run.
	ID       string    `json:"id"`
	Profile  string    `json:"profile"`
	Mode     string    `json:"mode"`
	Deadline string    `json:"deadline"` // scaled
	Seed     int64     `json:"seed"`
	Repeat   int       `json:"repeat"`
	Focus    string    `json:"focus,omitempty"`
	Shards   []string  `json:"shards"` // "all", or each K/N merged
	Go       string    `json:"go"`
	Ginkgo   string    `json:"ginkgo"`
	Commit   string    `json:"commit,omitempty"`
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"` // wall time (merged: the slowest shard)
	// Tally and Green are the run's outcome, as the matrix written beside
	// it says (WriteAll sets them): green only when every cell and every
	// spec outside a cell came out as expected.
	Tally Tally `json:"tally"`
	Green bool  `json:"green"`
	// Plan is every spec of the run under its focus, in every shard (a
	// shard's Ginkgo report names those it left to the others), and NoCell
	// the specs of this shard that ran and left no row (a random run that
	// passed): merge checks each shard's rows against the split of the
	// plan (Merge). A no_cell entry names its repeat.
	Plan   []PlannedSpec `json:"plan,omitempty"`
	NoCell []PlannedSpec `json:"no_cell,omitempty"`
}

// PlannedSpec is one spec of a run: its family and full text, and (in
// no_cell) the repeat that ran it.
type PlannedSpec struct {
	Family string `json:"family"`
	Spec   string `json:"spec"`
	Repeat int    `json:"repeat,omitempty"`
}

// Unique is specs sorted, each once.
func Unique(specs []PlannedSpec) []PlannedSpec {
	specs = slices.Clone(specs)
	slices.SortFunc(specs, func(a, b PlannedSpec) int {
		return cmp.Or(strings.Compare(a.Family, b.Family), strings.Compare(a.Spec, b.Spec), cmp.Compare(a.Repeat, b.Repeat))
	})
	return slices.Compact(specs)
}

// The files a run leaves in its reports directory.
const (
	MatrixFile   = "matrix.json"
	RunFile      = "run.json"
	JUnitFile    = "junit.xml"
	HTMLFile     = "matrix.html"
	MarkdownFile = "matrix.md"
	EvidenceDir  = "evidence"
)

// WriteAll writes the matrix, the run, JUnit, HTML and markdown into dir.
func WriteAll(dir string, run Run, cells []Cell) error {
	fams := Group(cells)
	run.Tally = Count(fams)
	run.Green = run.Tally.Not == 0
	r, _ := json.MarshalIndent(run, "", "  ")
	files := []struct {
		name string
		data func() ([]byte, error)
	}{
		{RunFile, func() ([]byte, error) { return r, nil }},
		{JUnitFile, func() ([]byte, error) { return JUnit(run, fams) }},
		{HTMLFile, func() ([]byte, error) { return HTML(run, fams, dir) }},
		{MarkdownFile, func() ([]byte, error) { return Markdown(run, fams), nil }},
	}
	if err := WriteMatrix(filepath.Join(dir, MatrixFile), cells); err != nil {
		return fmt.Errorf("writing %s: %v", MatrixFile, err)
	}
	for _, f := range files {
		b, err := f.data()
		if err == nil {
			err = writeFile(filepath.Join(dir, f.name), b)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %v", f.name, err)
		}
	}
	return nil
}

// The most a reports folder's files may hold: run.json (with its plan of
// every spec) and matrix.json (every repeat of every cell with its
// evidence: a strict nightly run is a few MB).
const (
	MaxRunFile    = 4 << 20
	MaxMatrixFile = 256 << 20
)

// ReadDir reads the matrix and the run a chaos run left in dir, as
// untrusted input (internal/artifact): each a regular file, never a symlink,
// a FIFO or a device, within its size limit, strict JSON.
func ReadDir(dir string) (Run, Matrix, error) {
	var run Run
	var cells Matrix
	for _, f := range []struct {
		name  string
		limit int64
		v     any
	}{{RunFile, MaxRunFile, &run}, {MatrixFile, MaxMatrixFile, &cells}} {
		err := artifact.ReadJSON(filepath.Join(dir, f.name), f.limit, f.v)
		if errors.Is(err, os.ErrNotExist) {
			return Run{}, nil, fmt.Errorf("%s has no %s: not a logjam reports directory", dir, f.name)
		}
		if err != nil {
			return Run{}, nil, fmt.Errorf("%s: %v", filepath.Join(dir, f.name), err)
		}
	}
	if err := cells.upgrade(); err != nil {
		return Run{}, nil, fmt.Errorf("%s: %v", filepath.Join(dir, MatrixFile), err)
	}
	return run, cells, nil
}
