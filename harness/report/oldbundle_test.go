package report

import (
	"os"
	"path/filepath"
	"testing"
)

// A bundle written before a cell's buffering was named so (cell.json's and
// replay.json's "stderr", the profile's random "Family") still reads, into
// the names of today: testdata/bundle-before-buffering is such a bundle,
// verbatim.
func TestABundleWrittenBeforeTheRenamesStillReads(t *testing.T) {
	b, err := ReadBundle(filepath.Join("testdata", "bundle-before-buffering"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Cell.Buffering != "unbuffered" || b.Replay.Buffering != "unbuffered" || b.Cell.OldBuffering != "" || b.Replay.OldBuffering != "" {
		t.Errorf("the old \"stderr\" did not become Buffering: cell %+v, replay %+v", b.Cell.Cell, b.Replay.Cell)
	}
	if r := b.Replay.Profile.Random; r.Kind != "" || r.OldFamily != "" || r.Runs != 24 {
		t.Errorf("the profile's random knobs: %+v", r)
	}

	// An old "Family" that names a kind moves to Kind; both spellings at
	// once are refused.
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "bundle-before-buffering"))); err != nil {
		t.Fatal(err)
	}
	random := func(m map[string]any) map[string]any { return m["profile"].(map[string]any)["Random"].(map[string]any) }
	editReplay(t, dir, func(m map[string]any) { random(m)["Family"] = "lazyinit" })
	if b, err := ReadBundle(dir); err != nil || b.Replay.Profile.Random.Kind != "lazyinit" {
		t.Fatalf("Family lazyinit: %v, %+v", err, b)
	}
	editReplay(t, dir, func(m map[string]any) { random(m)["Kind"] = "sink" })
	if _, err := ReadBundle(dir); err == nil {
		t.Error("a profile with both Kind and Family is accepted")
	}
	editReplay(t, dir, func(m map[string]any) { delete(random(m), "Kind"); m["buffering"] = "unbuffered" })
	if _, err := ReadBundle(dir); err == nil {
		t.Error("a replay record with both buffering and stderr is accepted")
	}
}
