package report

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no report to render: %v", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, fmt.Errorf("%s is not a Ginkgo JSON report: %v", path, err)
	}
	var m Matrix
	for _, r := range reports {
		for _, sr := range r.SpecReports {
			for _, e := range sr.ReportEntries {
				var c Cell
				if e.Name == EntryName && json.Unmarshal([]byte(e.Value.AsJSON), &c) == nil {
					m = append(m, c)
				}
			}
		}
	}
	m.Sort()
	return m, nil
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
	return b, nil
}
