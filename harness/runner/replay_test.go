package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"logjam/failpoints"
	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/internal/childbin"
	"logjam/internal/config"
	"logjam/internal/testkit"
	"logjam/scenario"
	"logjam/verdict"
)

// A forced failure in each family (a cell run against an expectation it
// does not meet, some with a failpoint) leaves a bundle as the suites do;
// logjam replay of the bundle observes the recorded verdict, on the kept
// binary after the suite's build is gone, and on a rebuild when the cache
// lost it. A bundle whose cell was changed replays to a different verdict,
// and says so.
func TestReplayReproducesAForcedFailureOfEveryFamily(t *testing.T) {
	prof := replaySetup(t, "needs Linux: the pipes, signals and fatal cells")
	// The suite's build of the child, deleted once the bundles exist.
	bin := testkit.ChildCopy(t)
	widened := failpoints.Set{{Name: failpoints.PythonWriteGILDropped, Terms: "return(10)"}}
	cases := []struct {
		family string
		spec   cell.Spec
	}{
		{"deadlock", cell.Spec{Cell: scenario.Cell{Scenario: "D1", Policy: "pystderr"}}},
		{"capture", cell.Spec{Cell: scenario.Cell{Scenario: "C2", Policy: "pystderr"}}},
		{"pipes", cell.Spec{Cell: scenario.Cell{Scenario: "P5", Policy: "adaptive"}}},
		{"signals", cell.Spec{Cell: scenario.Cell{Scenario: "I2", Policy: "adaptive"}}},
		{"signals", cell.Spec{Cell: scenario.Cell{Scenario: "I5", Policy: "adaptive"}}},
		{"fatal", cell.Spec{Cell: scenario.Cell{Scenario: "F1", Policy: "buffered"}}},
		{"daemon", cell.Spec{Cell: scenario.Cell{Scenario: "T1", Policy: "pystderr", Python: "3.13.7"}, Failpoints: widened}},
		{"utf8", cell.Spec{Cell: scenario.Cell{Scenario: "U1", Policy: "pystderr"}}},
		{"lazyinit", cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "old", Backend: "cuda"}}},
		{"harness", cell.Spec{Cell: scenario.Cell{Scenario: "H3"}}},
	}
	var dirs []string
	for _, c := range cases {
		spec := c.spec
		spec.Platform = "linux"
		if spec.Python == "" && spec.Scenario != "H3" {
			spec.Python = "3.12"
		}
		out, err := cell.Run(context.Background(), bin, spec, prof)
		if err != nil {
			t.Fatalf("%s: %v", spec.Scenario, err)
		}
		if out.Observed == verdict.OK {
			t.Fatalf("%s under %s came out OK: not a failure to force", spec.Scenario, spec.Policy)
		}
		name := c.family + " " + spec.Scenario + " " + spec.Policy + spec.Variant
		row := report.Cell{ID: spec.Scenario, Name: name, Family: c.family, Cell: scenario.Cell{Scenario: spec.Scenario, Policy: spec.Policy},
			Expected: verdict.OK, Observed: out.Observed, // the wrong expectation that forces the bundle
			Evidence: report.Evidence{Reason: out.Reason, Command: out.Command}}
		b, err := out.Bundle(row, spec, prof, bin)
		if err != nil {
			t.Fatalf("%s: keeping the binary: %v", name, err)
		}
		dir := report.BundleDir(t.TempDir(), name)
		if err := report.WriteBundle(dir, b); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
		if strings.Contains(b.Cell.Evidence.Command, bin) {
			t.Errorf("%s: the bundle's command still names the suite's build: %s", name, b.Cell.Evidence.Command)
		}
	}
	if err := os.Remove(bin); err != nil { // as gexec does when the suite ends
		t.Fatal(err)
	}
	for i, dir := range dirs {
		var w strings.Builder
		if code := Main([]string{"replay", dir}, &w); code != 0 || !strings.Contains(w.String(), ": the same\n") {
			t.Errorf("replay of %s %s: status %d\n%s", cases[i].family, cases[i].spec.Scenario, code, w.String())
		}
		t.Log(w.String())
	}

	t.Run("rebuilt when the cache lost the binary", func(t *testing.T) {
		t.Setenv(childbin.CacheEnv, t.TempDir())
		var w strings.Builder
		if code := Main([]string{"replay", dirs[0]}, &w); code != 0 || !strings.Contains(w.String(), "rebuilt from") {
			t.Fatalf("status %d\n%s", code, w.String())
		}
		t.Log(w.String())
	})

	t.Run("a changed cell replays to a different verdict, and says so", func(t *testing.T) {
		path := filepath.Join(dirs[0], report.ReplayRecordFile) // D1 pystderr: HANG
		var r report.Replay
		raw, _ := os.ReadFile(path)
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		r.Policy = "logjam" // D1 under logjam: OK
		raw, _ = json.Marshal(r)
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		// cell.json says the same cell (one that names another is refused:
		// TestReplayRefusesACraftedBundleWithNothingRunOrTouched).
		cellPath := filepath.Join(dirs[0], report.CellFile)
		var c map[string]any
		raw, _ = os.ReadFile(cellPath)
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		c["policy"] = "logjam"
		raw, _ = json.Marshal(c)
		if err := os.WriteFile(cellPath, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		var w strings.Builder
		if code := Main([]string{"replay", dirs[0]}, &w); code != 1 || !strings.Contains(w.String(), "DIFFERENT") {
			t.Fatalf("status %d\n%s", code, w.String())
		}
	})
}

// replaySetup skips the test off Linux (why), gives it a child binary
// cache of its own and returns the local profile of the module's
// ginkgo.yml.
func replaySetup(t *testing.T, why string) config.Profile {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip(why)
	}
	t.Setenv(childbin.CacheEnv, t.TempDir())
	prof, err := config.Load(filepath.Join(testkit.ModuleRoot(t), config.FileName), "local")
	if err != nil {
		t.Fatal(err)
	}
	return prof
}

func TestReplayRefusesWhatIsNotABundle(t *testing.T) {
	for _, args := range [][]string{{"replay"}, {"replay", t.TempDir()}, {"replay", "-n", "0", "x"}, {"replay", "a", "b"}} {
		var w strings.Builder
		if code := Main(args, &w); code != 2 {
			t.Errorf("%v: status %d, want 2", args, code)
		}
	}
}
