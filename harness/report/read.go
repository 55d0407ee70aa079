package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/internal/artifact"
	"logjam/internal/shard"
	"logjam/telemetry"
)

// ReadMatrix reads a matrix WriteMatrix wrote, as untrusted input
// (internal/artifact).
func ReadMatrix(path string) (Matrix, error) {
	var m Matrix
	if err := artifact.ReadJSON(path, MaxMatrixFile, &m); err != nil {
		return nil, fmt.Errorf("%s is not a matrix: %v", path, err)
	}
	if err := m.upgrade(); err != nil {
		return nil, fmt.Errorf("%s is not a matrix: %v", path, err)
	}
	return m, nil
}

// upgrade moves the old spellings the cells of a matrix written before may
// carry to their names (scenario.Cell.Upgrade).
func (m Matrix) upgrade() error {
	for i := range m {
		if err := m[i].Cell.Upgrade(); err != nil {
			return fmt.Errorf("%s: %v", clip(m[i].Name), err)
		}
	}
	return nil
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
					c.Spec = sr.FullText()
					cells = append(cells, c)
				}
			}
			if !sr.State.Is(types.SpecStateFailureStates) {
				m = append(m, cells...)
				continue
			}
			if len(cells) == 0 && sr.State == types.SpecStateInterrupted &&
				sr.Failure.FailureNodeType.Is(types.NodeTypeReportBeforeEach|types.NodeTypeReportAfterEach) {
				// A Ctrl-C caught only a report node (Ginkgo runs them for the
				// specs the focus skipped too): the spec left nothing to show.
				continue
			}
			msg := specFailure(sr)
			if len(cells) == 0 {
				row := SpecRow(family, specID(sr), specName(sr), msg)
				if sr.LeafNodeType == types.NodeTypeIt {
					row.Spec = sr.FullText()
				}
				m = append(m, row)
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

// PlanOf reads a Ginkgo JSON report of one repeat of family: plan is every
// spec (It) the run selected, those this shard ran and those it skipped as
// another shard's (shard.SkipMessage); noCell the specs it ran that passed
// without a cell (a random run), or skipped on its own (needs Linux).
// Specs outside the focus are neither. A noCell entry names repeat.
func PlanOf(path, family string, repeat int) (plan, noCell []PlannedSpec, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, nil, fmt.Errorf("%s is not a Ginkgo JSON report: %v", path, err)
	}
	for _, r := range reports {
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType != types.NodeTypeIt || sr.State == types.SpecStatePending {
				continue
			}
			msg := sr.Failure.Message
			if sr.State == types.SpecStateSkipped && msg == "" {
				continue // outside the focus
			}
			ps := PlannedSpec{Family: family, Spec: sr.FullText()}
			plan = append(plan, ps)
			switch {
			case sr.State == types.SpecStateSkipped && strings.HasPrefix(msg, shard.SkipMessage):
			case sr.State == types.SpecStateSkipped, sr.State == types.SpecStatePassed && !hasCell(sr):
				noCell = append(noCell, PlannedSpec{Family: family, Spec: ps.Spec, Repeat: repeat})
			}
		}
	}
	return plan, noCell, nil
}

func hasCell(sr types.SpecReport) bool {
	for _, e := range sr.ReportEntries {
		if e.Name == EntryName {
			return true
		}
	}
	return false
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

// The most a bundle file may hold: a bundle is untrusted input, read whole.
const (
	MaxBundleRecord = 1 << 20  // cell.json, replay.json
	MaxBundleData   = 64 << 20 // stdout.txt, fd2.bin, telemetry.jsonl
)

// ReadBundle reads a bundle WriteBundle left in dir, as untrusted input: dir
// holds the bundle's files and nothing else, each a regular file (never a
// symlink, a FIFO or a device) within its size limit; the records are
// strict JSON (internal/artifact: no unknown field, no key twice or in another
// case than its field, nothing after the value); replay.json, when
// present, passes Replay.Validate. Nothing is run, created or touched.
func ReadBundle(dir string) (*Bundle, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, errors.New("not a directory")
	}
	files, err := bundleFiles(dir)
	if err != nil {
		return nil, err
	}
	return parseBundle(files)
}

// bundleFiles reads every file of the bundle in dir (ReadBundle's rules).
func bundleFiles(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	limits := map[string]int64{CellFile: MaxBundleRecord, ReplayRecordFile: MaxBundleRecord,
		StdoutFile: MaxBundleData, FD2File: MaxBundleData, TelemetryFile: MaxBundleData}
	files := map[string][]byte{}
	for _, e := range entries {
		limit, ok := limits[e.Name()]
		if !ok {
			return nil, fmt.Errorf("%q is not a bundle file (a bundle holds %s, %s, %s, %s and %s only)",
				clip(e.Name()), CellFile, StdoutFile, FD2File, TelemetryFile, ReplayRecordFile)
		}
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file (%s)", e.Name(), e.Type())
		}
		b, err := artifact.Read(filepath.Join(dir, e.Name()), limit)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", e.Name(), err)
		}
		files[e.Name()] = b
	}
	for _, name := range []string{CellFile, StdoutFile, FD2File, TelemetryFile} {
		if _, ok := files[name]; !ok {
			return nil, fmt.Errorf("%s is missing", name)
		}
	}
	return files, nil
}

// parseBundle checks and decodes the files bundleFiles read.
func parseBundle(files map[string][]byte) (*Bundle, error) {
	b := &Bundle{Stdout: files[StdoutFile], FD2: files[FD2File]}
	if err := artifact.Decode(files[CellFile], &b.Cell); err != nil {
		return nil, fmt.Errorf("%s: %v", CellFile, err)
	}
	if err := b.Cell.Cell.Upgrade(); err != nil {
		return nil, fmt.Errorf("%s: %v", CellFile, err)
	}
	telemetry.Read(bytes.NewReader(files[TelemetryFile]), func(e telemetry.Event) { b.Events = append(b.Events, e) })
	if raw, ok := files[ReplayRecordFile]; ok {
		b.Replay = &Replay{}
		if err := artifact.Decode(raw, b.Replay); err != nil {
			return nil, fmt.Errorf("%s: %v", ReplayRecordFile, err)
		}
		if err := b.Replay.upgrade(); err != nil {
			return nil, fmt.Errorf("%s: %v", ReplayRecordFile, err)
		}
		if err := b.Replay.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %v", ReplayRecordFile, err)
		}
		if err := b.SameCell(); err != nil {
			return nil, err
		}
	}
	return b, nil
}
