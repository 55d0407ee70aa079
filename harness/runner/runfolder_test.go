package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"logjam/internal/shard"
)

// Each run has its own folder (two in the same second too); a whole run
// moves reports/latest when it ends, a focused or sharded one
// reports/latest-focus; an interrupted or refused one moves nothing.
func TestRunsHaveTheirOwnFoldersAndOnlyAFinishedWholeRunMovesLatest(t *testing.T) {
	reports := t.TempDir()
	now := time.Date(2026, 12, 1, 3, 4, 5, 0, time.UTC)
	sh, err := shard.Parse("2/4")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := newRunFolder(reports, now, "local", "", shard.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := newRunFolder(reports, now, "local", "", shard.Shard{})
	focused, _ := newRunFolder(reports, now, "focus", "D1 .*pystderr", shard.Shard{})
	sharded, _ := newRunFolder(reports, now, "nightly", "", sh)
	for dir, want := range map[string]string{
		whole: "runs/20261201-030405-local", again: "runs/20261201-030405-local-2",
		focused: "runs/20261201-030405-focus-focus-D1_._pystderr", sharded: "runs/20261201-030405-nightly-shard-2-of-4",
	} {
		if rel, _ := filepath.Rel(reports, dir); rel != want {
			t.Errorf("run folder %s, want %s", rel, want)
		}
	}
	if p := pointerFor("", shard.Shard{}); p != LatestPointer {
		t.Errorf("a whole run moves %s", p)
	}
	if p, q := pointerFor("D1", shard.Shard{}), pointerFor("", sh); p != LatestFocusPointer || q != LatestFocusPointer {
		t.Errorf("a focused run moves %s, a shard %s", p, q)
	}

	var w strings.Builder
	link := func(name string) string { l, _ := os.Readlink(filepath.Join(reports, name)); return l }
	publishRun(reports, whole, LatestPointer, 1, &w)
	publishRun(reports, again, LatestPointer, 130, &w) // Ctrl-C'd
	publishRun(reports, again, LatestPointer, 2, &w)   // refused
	publishRun(reports, focused, LatestFocusPointer, 0, &w)
	if got := link(LatestPointer); got != "runs/20261201-030405-local" {
		t.Errorf("latest -> %q, want the finished whole run\n%s", got, w.String())
	}
	if got := link(LatestFocusPointer); got != "runs/20261201-030405-focus-focus-D1_._pystderr" {
		t.Errorf("latest-focus -> %q\n%s", got, w.String())
	}
	if !strings.Contains(w.String(), "reports/latest not moved (the run did not finish (exit status 130))") {
		t.Errorf("an interrupted run did not say the pointer stayed:\n%s", w.String())
	}
	publishRun(reports, again, LatestPointer, 0, &w)
	if got := link(LatestPointer); got != "runs/20261201-030405-local-2" {
		t.Errorf("latest -> %q after the second whole run", got)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(reports, ".latest*")); len(leftovers) > 0 {
		t.Errorf("temporary links left: %v", leftovers)
	}
}
