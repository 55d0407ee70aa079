package runner

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"logjam/internal/runfolder"
	"logjam/internal/shard"
)

// A run without -out writes into a folder of its own under reports/runs/,
// so that no run overwrites or mixes into another's files (a Ctrl-C'd run,
// a focused rerun, two runs at once in one tree). When a run ends (not
// interrupted, not refused), a pointer moves to it atomically: a symlink
// reports/latest for a whole matrix, reports/latest-focus for a part of one
// (-focus or -shard), so a focused rerun never hides the last full matrix.
const (
	RunsDir            = runfolder.RunsDir
	LatestPointer      = "latest"
	LatestFocusPointer = "latest-focus"
)

// pointerFor is the pointer a run moves: latest for the whole matrix.
func pointerFor(focus string, sh shard.Shard) string {
	if focus == "" && sh.All() {
		return LatestPointer
	}
	return LatestFocusPointer
}

// newRunFolder makes reports/runs/<time>-<profile>[-focus-<focus>][-shard-K-of-N]
// (runfolder.New) and returns it.
func newRunFolder(reports string, now time.Time, profile, focus string, sh shard.Shard) (string, error) {
	name := profile
	if focus != "" {
		name += "-focus-" + runfolder.Slug(focus, 40)
	}
	if !sh.All() {
		name += "-shard-" + strings.ReplaceAll(sh.String(), "/", "-of-")
	}
	return runfolder.New(reports, now, name)
}

// publishRun moves the pointer to the run's folder when the run ended
// (runfolder.Publish).
func publishRun(reports, dir, pointer string, code int, w io.Writer) {
	runfolder.Publish(reports, dir, pointer, code, w)
}

// defaultReports is the folder logjam report reads by default: the last
// whole matrix (reports/latest), else reports/ itself (-out reports, or a
// tree from before runs had their own folders).
func defaultReports() string {
	latest := filepath.Join("reports", LatestPointer)
	if _, err := os.Stat(latest); err == nil {
		return latest
	}
	return "reports"
}
