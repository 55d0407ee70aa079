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
// fd-2 bytes and the telemetry as the parent read it, and what replays it
// (Replay; nil when the cell never ran a child).
type Bundle struct {
	Cell   Cell
	Stdout []byte
	FD2    []byte
	Events []telemetry.Event
	Replay *Replay
}

// The files of a bundle.
const (
	CellFile      = "cell.json"
	StdoutFile    = "stdout.txt"
	FD2File       = "fd2.bin"
	TelemetryFile = "telemetry.jsonl"
	ReplayFile    = "replay.sh"
)

// WriteBundle leaves b in dir, with a replay.sh that replays the cell
// (logjam replay: the same binary, fd-2 arrangement, signals, failpoints
// and profile) and names the command that reruns it in its suite.
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
	replay := replayScript(dir, b)
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{{CellFile, cell, 0o644}, {StdoutFile, b.Stdout, 0o644}, {FD2File, b.FD2, 0o644}, {TelemetryFile, tel, 0o644}, {ReplayFile, []byte(replay), 0o755}}
	if b.Replay != nil {
		run, err := json.MarshalIndent(b.Replay, "", "  ")
		if err != nil {
			return err
		}
		files = append(files, struct {
			name string
			data []byte
			mode os.FileMode
		}{ReplayRecordFile, run, 0o644})
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return os.Chmod(filepath.Join(dir, ReplayFile), 0o755)
}

// replayScript replays the cell with logjam replay from the module it ran
// in; a bundle without a Run (no child ran) can only be rerun in its suite.
func replayScript(dir string, b Bundle) string {
	var s strings.Builder
	s.WriteString("#!/bin/sh\n# Reruns this cell in its suite:\n#   " + b.Cell.Rerun + "\n")
	if b.Replay == nil {
		s.WriteString("echo 'no child ran for this cell: rerun it in its suite' >&2\nexit 2\n")
		return s.String()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	s.WriteString("# Replays it: the same child binary, fd-2 arrangement, signals, failpoints and profile.\n")
	if b.Replay.Module != "" {
		fmt.Fprintf(&s, "cd %s && ", shellQuote(b.Replay.Module))
	}
	fmt.Fprintf(&s, "exec go run ./cmd/logjam replay %s\n", shellQuote(abs))
	return s.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

// BundleDir is where the bundle of the cell named name goes under reports.
func BundleDir(reports, name string) string {
	return filepath.Join(reports, "evidence", strings.Trim(unsafeName.ReplaceAllString(name, "_"), "_"))
}
