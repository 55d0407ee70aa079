package report

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Rerun is the command that reruns exactly one cell with the profile, seed
// and timeout scale it ran with (seed 0 and scale "" are left out), from
// any directory inside the module.
func Rerun(family, name, profile string, seed int64, timeoutScale string) string {
	env := "LOGJAM_PROFILE=" + profile
	if seed != 0 {
		env += fmt.Sprintf(" LOGJAM_SEED=%d", seed)
	}
	if timeoutScale != "" {
		env += " LOGJAM_TIMEOUT_SCALE=" + timeoutScale
	}
	focus := strings.ReplaceAll(regexp.QuoteMeta(name), "'", `'\''`)
	return fmt.Sprintf(`cd "$(go list -m -f '{{.Dir}}')" && %s ./logjam ginkgo --focus '%s' ./suites/%s`, env, focus, family)
}

// The fields a printed rerun command is built from, as Rerun writes them.
var (
	rerunEnv   = lazyRegexp(`^cd "\$\(go list -m -f '\{\{\.Dir\}\}'\)" && LOGJAM_PROFILE=([A-Za-z0-9_-]{1,64})(?: LOGJAM_SEED=(-?[0-9]{1,19}))?(?: LOGJAM_TIMEOUT_SCALE=([0-9.eE+-]{1,24}))? \./logjam ginkgo --focus '`)
	familyName = lazyRegexp(`^[a-z0-9_]{1,32}$`)
)

// RerunOf is the rerun command of a cell read from a matrix, a shard or a
// bundle, built by Rerun from validated fields, never copied from the
// file: the family (a suite's folder name), the cell's name (quoted by
// Rerun), and the profile, seed and timeout scale read from the recorded
// command (a profile's name, an integer, a positive finite number). It is
// "" when the cell recorded no command, or one that is not Rerun's.
func RerunOf(c Cell) string {
	if c.Family == "sink" {
		return sinkRerunOf(c)
	}
	m := rerunEnv().FindStringSubmatch(c.Rerun)
	if m == nil || !familyName().MatchString(c.Family) {
		return ""
	}
	var seed int64
	if m[2] != "" {
		var err error
		if seed, err = strconv.ParseInt(m[2], 10, 64); err != nil {
			return ""
		}
	}
	if m[3] != "" {
		if f, err := strconv.ParseFloat(m[3], 64); err != nil || !(f > 0) || math.IsInf(f, 0) {
			return ""
		}
	}
	return Rerun(c.Family, c.Name, m[1], seed, m[3])
}

// SinkRerun is the command that plays one cell of `logjam calibrate -sink`
// again: the row on one interpreter under one buffering, from the
// sink's own file (sink: its path, or its base name). A sink's bundle
// carries no code that replay would compile: the sink is the user's file,
// built again from where the user keeps it.
func SinkRerun(sink, row, python, buffering string) string {
	return fmt.Sprintf("./logjam calibrate -sink %s -rows %s -py %s -buffering %s", sink, row, python, buffering)
}

// SinkReplay is the command that replays a sink cell's evidence bundle
// (logjam replay -sink), "" for a cell of no sink or no bundle. The bundle
// is as recorded: a caller neutralises it where it prints it.
func SinkReplay(c Cell) string {
	if c.Sink == nil || c.Bundle == "" {
		return ""
	}
	return fmt.Sprintf("./logjam replay -sink %s %s", SinkPath(c), c.Bundle)
}

// The fields a sink cell's commands are built from. A path is printed
// only when it is a plain word of a shell command (no quote, space, $, ;,
// glob or leading dash) with no ".." step.
var (
	sinkFile    = lazyRegexp(`^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$`)
	shellWord   = lazyRegexp(`^[A-Za-z0-9_./][A-Za-z0-9_.+=/-]{0,511}$`)
	rowID       = lazyRegexp(`^[A-Z]{1,3}[0-9]{1,2}$`)
	pythonShort = lazyRegexp(`^3\.[0-9]{1,2}(\.[0-9]{1,2})?$`)
)

// SinkPath is how a sink cell's commands name the sink's file: the
// absolute path it was read from when that validates (an absolute, clean
// shell word, its base name the recorded file's), else the recorded base
// name, else SINK.cpp (the command is then the user's to complete).
func SinkPath(c Cell) string {
	file := "SINK.cpp"
	if c.Sink != nil && sinkFile().MatchString(c.Sink.File) {
		file = c.Sink.File
	} else if c.Sink == nil && sinkFile().MatchString(c.Cell.Policy+".cpp") {
		file = c.Cell.Policy + ".cpp"
	}
	if c.Sink != nil {
		p := c.Sink.Path
		if shellWord().MatchString(p) && filepath.IsAbs(p) && filepath.Clean(p) == p && filepath.Base(p) == file {
			return p
		}
	}
	return file
}

// sinkRerunOf is SinkRerun from a sink cell's validated fields: its sink's
// path (SinkPath), row, Python and buffering; "" when one does not
// validate.
func sinkRerunOf(c Cell) string {
	if !rowID().MatchString(c.Cell.Scenario) || !pythonShort().MatchString(c.Cell.Python) || (c.Cell.Buffering != "buffered" && c.Cell.Buffering != "unbuffered" && c.Cell.Buffering != "") {
		return ""
	}
	buf := c.Cell.Buffering
	if buf == "" {
		buf = "buffered"
	}
	return SinkRerun(SinkPath(c), c.Cell.Scenario, c.Cell.Python, buf)
}
