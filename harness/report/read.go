package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/telemetry"
)

// ReadMatrix reads a matrix WriteMatrix wrote.
func ReadMatrix(path string) (Matrix, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Matrix
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s is not a matrix: %v", path, err)
	}
	return m, nil
}

// FromGinkgo collects the cells a Ginkgo JSON report carries (entries named
// EntryName), sorted.
func FromGinkgo(path string) (Matrix, error) {
	m, _, err := FromGinkgoRun(path)
	return m, err
}

// FromGinkgoRun is FromGinkgo plus the specs that failed without carrying
// a cell (a BeforeSuite, the failpoint probe, a spec that is not a cell),
// each as "<spec>: <failure message>".
func FromGinkgoRun(path string) (Matrix, []string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("no report to render: %v", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, nil, fmt.Errorf("%s is not a Ginkgo JSON report: %v", path, err)
	}
	var m Matrix
	var problems []string
	for _, r := range reports {
		for _, sr := range r.SpecReports {
			found := false
			for _, e := range sr.ReportEntries {
				var c Cell
				if e.Name == EntryName && json.Unmarshal([]byte(e.Value.AsJSON), &c) == nil {
					m = append(m, c)
					found = true
				}
			}
			if !found && sr.State.Is(types.SpecStateFailureStates) {
				name := sr.FullText()
				if name == "" {
					name = sr.LeafNodeType.String()
				}
				problems = append(problems, name+": "+sr.Failure.Message)
			}
		}
	}
	m.Sort()
	return m, problems, nil
}

// ReadBundle reads a bundle WriteBundle left in dir.
func ReadBundle(dir string) (*Bundle, error) {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	cell, err := read(CellFile)
	if err != nil {
		return nil, err
	}
	b := &Bundle{}
	if err := json.Unmarshal(cell, &b.Cell); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, CellFile), err)
	}
	if b.Stdout, err = read(StdoutFile); err != nil {
		return nil, err
	}
	if b.FD2, err = read(FD2File); err != nil {
		return nil, err
	}
	tel, err := read(TelemetryFile)
	if err != nil {
		return nil, err
	}
	telemetry.Read(bytes.NewReader(tel), func(e telemetry.Event) { b.Events = append(b.Events, e) })
	run, err := read(ReplayRecordFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No child ran for this cell (or an older bundle): nothing to replay.
	case err != nil:
		return nil, err
	default:
		b.Replay = &Replay{}
		if err := json.Unmarshal(run, b.Replay); err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ReplayRecordFile), err)
		}
	}
	return b, nil
}
