package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"logjam/telemetry"
)

// WriteMatrix writes the matrix as indented JSON.
func WriteMatrix(path string, m Matrix) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, b)
}

// writeFile puts data at path as a new regular file (mode 0644): written
// to a temporary file beside it and renamed over it, so that a symlink or
// a FIFO left at path in a folder someone else made (`logjam report DIR`
// re-renders into DIR) is replaced, never written through.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// Bundle is the evidence of one run: its cell, the child's stdout, the real
// fd-2 bytes and the telemetry as the parent read it, and what replays it
// (Replay; nil when the cell never ran a child).
type Bundle struct {
	Cell   Cell
	Stdout []byte
	FD2    []byte
	Events []telemetry.Event
	Replay *Replay
}

// The files of a bundle (and nothing else is one: ReadBundle refuses a
// folder holding more). There is no script: `logjam replay DIR` replays a
// bundle, and cell.json's rerun names the suite command.
const (
	CellFile      = "cell.json"
	StdoutFile    = "stdout.txt"
	FD2File       = "fd2.bin"
	TelemetryFile = "telemetry.jsonl"
)

// WriteBundle leaves b in dir.
func WriteBundle(dir string, b Bundle) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cell, err := json.MarshalIndent(b.Cell, "", "  ")
	if err != nil {
		return err
	}
	var tel []byte
	for _, e := range b.Events {
		tel = append(tel, e.Raw...)
		tel = append(tel, '\n')
	}
	files := []struct {
		name string
		data []byte
	}{{CellFile, cell}, {StdoutFile, b.Stdout}, {FD2File, b.FD2}, {TelemetryFile, tel}}
	if b.Replay != nil {
		run, err := json.MarshalIndent(b.Replay, "", "  ")
		if err != nil {
			return err
		}
		files = append(files, struct {
			name string
			data []byte
		}{ReplayRecordFile, run})
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// unsafeName is what may not stand in a bundle's folder name or a cell's
// HTML anchor: each run of it becomes one "_".
var unsafeName = lazyRegexp(`[^A-Za-z0-9._=-]+`)

// BundleDir is where the bundle of the cell named name goes under reports.
func BundleDir(reports, name string) string {
	return filepath.Join(reports, "evidence", strings.Trim(unsafeName().ReplaceAllString(name, "_"), "_"))
}
