package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"logjam/internal/shard"
)

// A run without -out writes into a folder of its own under reports/runs/,
// so that no run overwrites or mixes into another's files (a Ctrl-C'd run,
// a focused rerun, two runs at once in one tree). When a run ends (not
// interrupted, not refused), a pointer moves to it atomically: a symlink
// reports/latest for a whole matrix, reports/latest-focus for a part of one
// (-focus or -shard), so a focused rerun never hides the last full matrix.
const (
	RunsDir            = "runs"
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

var unsafeRunName = regexp.MustCompile(`[^A-Za-z0-9.=-]+`)

// newRunFolder makes reports/runs/<time>-<profile>[-focus-<focus>][-shard-K-of-N]
// (with -2, -3... when two runs start in the same second) and returns it.
func newRunFolder(reports string, now time.Time, profile, focus string, sh shard.Shard) (string, error) {
	name := now.UTC().Format("20060102-150405") + "-" + profile
	if focus != "" {
		slug := strings.Trim(unsafeRunName.ReplaceAllString(focus, "_"), "_")
		if len(slug) > 40 {
			slug = slug[:40]
		}
		name += "-focus-" + slug
	}
	if !sh.All() {
		name += "-shard-" + strings.ReplaceAll(sh.String(), "/", "-of-")
	}
	runs := filepath.Join(reports, RunsDir)
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return "", err
	}
	for i := 1; ; i++ {
		dir := filepath.Join(runs, name)
		if i > 1 {
			dir += fmt.Sprintf("-%d", i)
		}
		err := os.Mkdir(dir, 0o755) // exclusive: a folder is one run's
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			return "", err
		}
	}
}

// publishRun moves the pointer to the run's folder when the run ended
// (exit 0 or 1): a symlink made beside it and renamed over it, so a reader
// sees the old run or the new one, never none or half. An interrupted or
// refused run leaves the pointer where it was, and says so.
func publishRun(reports, dir, pointer string, code int, w io.Writer) {
	rel, err := filepath.Rel(reports, dir)
	if err == nil && code != 0 && code != 1 {
		err = fmt.Errorf("the run did not finish (exit status %d)", code)
	}
	if err == nil {
		err = movePointer(reports, pointer, rel)
	}
	if err != nil {
		fmt.Fprintf(w, "logjam: reports/%s not moved (%v); this run's reports are in %s\n", pointer, err, dir)
		return
	}
	fmt.Fprintf(w, "logjam: reports/%s -> %s\n", pointer, rel)
}

// movePointer points reports/<pointer> at target (relative to reports).
func movePointer(reports, pointer, target string) error {
	tmp := filepath.Join(reports, fmt.Sprintf(".%s-%d", pointer, os.Getpid()))
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(reports, pointer)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
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
