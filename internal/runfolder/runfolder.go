// Package runfolder gives a run a folder of its own under reports/runs/ and
// moves a pointer (a symlink under reports/) to it once the run ends.
package runfolder

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
)

// RunsDir is the folder under reports/ that holds every run's own folder.
const RunsDir = "runs"

var unsafe = regexp.MustCompile(`[^A-Za-z0-9.=-]+`)

// Slug is s made safe for a folder's or a pointer's name: every run of
// other characters one "_", at most max bytes (a user's text never names a
// path outside reports/runs).
func Slug(s string, max int) string {
	slug := strings.Trim(unsafe.ReplaceAllString(s, "_"), "_")
	if len(slug) > max {
		slug = slug[:max]
	}
	return slug
}

// New makes reports/runs/<time>-<name> (with -2, -3... when two runs start
// in the same second; the folder made exclusively, so it is one run's) and
// returns it. name must be Slug-safe.
func New(reports string, now time.Time, name string) (string, error) {
	name = now.UTC().Format("20060102-150405") + "-" + name
	runs := filepath.Join(reports, RunsDir)
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return "", err
	}
	for i := 1; ; i++ {
		dir := filepath.Join(runs, name)
		if i > 1 {
			dir += fmt.Sprintf("-%d", i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			return "", err
		}
	}
}

// Publish moves reports/<pointer> to the run's folder when the run ended
// (exit 0 or 1): a symlink made beside it and renamed over it, so a reader
// sees the old run or the new one, never none or half. An interrupted or
// refused run leaves the pointer where it was, and says so.
func Publish(reports, dir, pointer string, code int, w io.Writer) {
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
