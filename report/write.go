package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"logjam/telemetry"
)

// WriteMatrix writes the matrix as indented JSON.
func WriteMatrix(path string, m Matrix) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Bundle is the evidence of one run: its cell, the child's stdout, the real
// fd-2 bytes and the telemetry as the parent read it.
type Bundle struct {
	Cell   Cell
	Stdout []byte
	FD2    []byte
	Events []telemetry.Event
}

// The files of a bundle.
const (
	CellFile      = "cell.json"
	StdoutFile    = "stdout.txt"
	FD2File       = "fd2.bin"
	TelemetryFile = "telemetry.jsonl"
	ReplayFile    = "replay.sh"
)

// WriteBundle leaves b in dir, with a replay.sh that reruns the cell in its
// suite (as a comment) and the child alone (telemetry on fd 3).
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
	replay := fmt.Sprintf("#!/bin/sh\n# Reruns this cell in the suite:\n#   %s\n# Reruns the child alone (telemetry on fd 3):\n%s 3>telemetry.replay.jsonl\n",
		b.Cell.Rerun, b.Cell.Evidence.Command)
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{{CellFile, cell, 0o644}, {StdoutFile, b.Stdout, 0o644}, {FD2File, b.FD2, 0o644}, {TelemetryFile, tel, 0o644}, {ReplayFile, []byte(replay), 0o755}}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return os.Chmod(filepath.Join(dir, ReplayFile), 0o755)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

// BundleDir is where the bundle of the cell named name goes under reports.
func BundleDir(reports, name string) string {
	return filepath.Join(reports, "evidence", strings.Trim(unsafeName.ReplaceAllString(name, "_"), "_"))
}
