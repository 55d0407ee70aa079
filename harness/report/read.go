package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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

// FromGinkgo collects the outcome of every spec a Ginkgo JSON report
// holds, sorted: the cells (entries named EntryName), each failing its
// check when its spec failed although its verdict matched (Failure), and
// a row of its own (SpecRow, under family) for each spec that failed
// without a cell: a random run, a BeforeSuite, the failpoint probe. This
// is the one place that turns a spec's state into an outcome.
func FromGinkgo(path, family string) (Matrix, error) {
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
			var cells Matrix
			for _, e := range sr.ReportEntries {
				var c Cell
				if e.Name == EntryName && json.Unmarshal([]byte(e.Value.AsJSON), &c) == nil {
					cells = append(cells, c)
				}
			}
			if !sr.State.Is(types.SpecStateFailureStates) {
				m = append(m, cells...)
				continue
			}
			msg := specFailure(sr)
			if len(cells) == 0 {
				m = append(m, SpecRow(family, specID(sr), specName(sr), msg))
				continue
			}
			// A cell whose verdict did not match is what failed its spec;
			// otherwise another check did, and fails every cell of it.
			if cells.Unexpected() == 0 {
				for i := range cells {
					cells[i].Failure = msg
				}
			}
			m = append(m, cells...)
		}
	}
	m.Sort()
	return m, nil
}

// specFailure is a failed spec's message and where it failed.
func specFailure(sr types.SpecReport) string {
	f := sr.Failure
	msg := strings.TrimSpace(f.Message)
	if msg == "" {
		msg = sr.State.String()
	}
	if f.FailureNodeType != types.NodeTypeInvalid && f.FailureNodeType != types.NodeTypeIt {
		msg = "in " + f.FailureNodeType.String() + ": " + msg
	}
	if loc := f.Location.String(); f.Location.FileName != "" {
		msg += "\n(at " + loc + ")"
	}
	return msg
}

// specName is a spec's full text, or its node type (a BeforeSuite).
func specName(sr types.SpecReport) string {
	if n := sr.FullText(); n != "" {
		return n
	}
	return sr.LeafNodeType.String()
}

// specID is a spec's short label: its leaf text up to its parameters
// ("R seed=42"), or its node type.
func specID(sr types.SpecReport) string {
	if t := sr.LeafNodeText; t != "" {
		t, _, _ = strings.Cut(t, " [")
		return t
	}
	return sr.LeafNodeType.String()
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
