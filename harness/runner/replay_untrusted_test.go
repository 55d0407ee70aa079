package runner

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"logjam/harness/report"
	"logjam/internal/childbin"
	"logjam/internal/config"
	"logjam/internal/testkit"
	"logjam/scenario"
	"logjam/verdict"
)

// canary is an executable that leaves a file if it ever runs.
func canary(t *testing.T, path, marker string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\ntouch '"+marker+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// mtimes records every file's modification time under the roots (a
// missing root records nothing).
func mtimes(roots ...string) map[string]time.Time {
	m := map[string]time.Time{}
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if info, err := os.Lstat(p); err == nil {
				m[p] = info.ModTime()
			}
			return nil
		})
	}
	return m
}

// Every crafted bundle of a hostile sender is refused with exit status 2
// and one line on stderr, before anything runs: the canaries (a payload
// the digest points at, a foreign module's child, a replay.sh) never run,
// no file's mtime moves (the bundle's, the payload's, the symlink
// targets'), the binary cache stays empty, and no build starts.
func TestReplayRefusesACraftedBundleWithNothingRunOrTouched(t *testing.T) {
	home := t.TempDir()
	cache := filepath.Join(home, ".cache", "logjam", "simrt")
	t.Setenv(childbin.CacheEnv, cache)
	marker := filepath.Join(home, "ran")
	payload := filepath.Join(home, "Downloads", "b", "payload")
	canary(t, payload, marker)
	// A foreign module that calls itself logjam, its child a canary.
	evil := filepath.Join(home, "evil")
	for name, body := range map[string]string{
		"go.mod":            "module logjam\n\ngo 1.22\n",
		"ginkgo.yml":        "profiles: {}\n",
		"cmd/simrt/main.go": "package main\n\nimport \"os\"\n\nfunc main() { os.WriteFile(" + `"` + marker + `"` + ", nil, 0o644) }\n",
	} {
		_ = os.MkdirAll(filepath.Join(evil, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(evil, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(home, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"id":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	prof := config.Profile{Name: "local", Deadline: 20 * time.Second, TimeoutScale: 1, Mode: "fast", Repeat: 1, GraceFloor: 2 * time.Second}
	base := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "evidence", "D1")
		b := report.Bundle{Cell: report.Cell{ID: "D1", Name: "deadlock D1 pystderr", Cell: scenario.Cell{Scenario: "D1", Policy: "pystderr"}, Expected: verdict.OK, Observed: verdict.Hang},
			Replay: &report.Replay{Cell: scenario.Cell{Scenario: "D1", Policy: "pystderr", Platform: "linux", Python: "3.12"}, Profile: prof, Binary: strings.Repeat("0", 64)}}
		if err := report.WriteBundle(dir, b); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	edit := func(k string, v any) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			path := filepath.Join(dir, report.ReplayRecordFile)
			raw, _ := os.ReadFile(path)
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(k, "profile.") {
				m["profile"].(map[string]any)[strings.TrimPrefix(k, "profile.")] = v
			} else {
				m[k] = v
			}
			raw, _ = json.Marshal(m)
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	put := func(name, body string, mode os.FileMode) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(name, target string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			_ = os.Remove(filepath.Join(dir, name))
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name  string
		craft func(*testing.T, string)
	}{
		{"a digest that climbs to a payload", edit("binary_sha256", "../../../Downloads/b/payload")},
		{"an absolute digest", edit("binary_sha256", payload)},
		{"a digest of the wrong length", edit("binary_sha256", "abc")},
		{"a foreign module to build", edit("module", evil)},
		{"an unknown field", edit("run", "sh -c 'touch "+marker+"'")},
		{"a profile outside the catalogue", edit("profile.Name", "evil")},
		{"a profile's knob out of range", edit("profile.Mode", "turbo")},
		{"a grace floor of a million hours", edit("profile.GraceFloor", float64(1e6*3600*1e9))},
		{"a repeat beyond the bound", edit("profile.Repeat", float64(1e9))},
		{"a cell.json that names another cell", func(t *testing.T, dir string) {
			path := filepath.Join(dir, report.CellFile)
			raw, _ := os.ReadFile(path)
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			m["policy"] = "logjam"
			raw, _ = json.Marshal(m)
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a failpoint outside the catalogue", edit("failpoints", "logjam/no-such=return(1)")},
		{"a scenario outside the catalogue", edit("scenario", "Z1")},
		{"a policy outside the catalogue", edit("policy", "evil")},
		{"an axis outside the catalogue", edit("platform", "windows")},
		{"a replay.sh that would run the canary", put("replay.sh", "#!/bin/sh\n'"+payload+"'\n", 0o755)},
		{"a module of its own inside", func(t *testing.T, dir string) {
			put("go.mod", "module logjam\n", 0o644)(t, dir)
			put("ginkgo.yml", "profiles: {}\n", 0o644)(t, dir)
		}},
		{"a symlinked cell.json", link(report.CellFile, secret)},
		{"a symlinked replay.json", link(report.ReplayRecordFile, secret)},
		{"a symlinked fd2.bin onto a device", link(report.FD2File, "/dev/zero")},
		{"an oversize fd2.bin", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, report.FD2File), report.MaxBundleData+1); err != nil {
				t.Fatal(err)
			}
		}},
		{"an oversize cell.json", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, report.CellFile), report.MaxBundleRecord+1); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := base(t)
			c.craft(t, dir)
			before := mtimes(dir, home)
			time.Sleep(10 * time.Millisecond) // a touch would show in the mtimes
			code, stderr := replayCapturingStderr(t, dir)
			if code != 2 {
				t.Errorf("status %d, want 2; stderr:\n%s", code, stderr)
			}
			if n := strings.Count(stderr, "\n"); n != 1 {
				t.Errorf("stderr is %d lines, want one:\n%s", n, stderr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("a canary ran")
			}
			after := mtimes(dir, home)
			for p, m := range before {
				if !after[p].Equal(m) {
					t.Errorf("%s was touched (%s -> %s)", p, m, after[p])
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%s was created", p)
				}
			}
			t.Log(strings.TrimSpace(stderr))
		})
	}
}

// replayCapturingStderr runs logjam replay dir and returns its status and
// what it wrote on stderr.
func replayCapturingStderr(t *testing.T, dir string) (int, string) {
	t.Helper()
	var w strings.Builder
	var code int
	stderr := testkit.CaptureStderr(t, func() { code = Main([]string{"replay", dir}, &w) })
	return code, stderr + w.String()
}

// A received folder laid out as a logjam module around its bundle
// (go.mod, ginkgo.yml, cmd/simrt whose main leaves a marker), replayed
// from inside it with the child binary not kept: replay finds that module
// by walking up from the working directory, and must neither build nor run
// it: one line naming -source, exit 2, no marker, nothing built into the
// cache.
func TestReplayNeverBuildsTheFolderAroundABundle(t *testing.T) {
	home := t.TempDir()
	cache := filepath.Join(home, ".cache", "logjam", "simrt")
	t.Setenv(childbin.CacheEnv, cache)
	marker := filepath.Join(home, "ran")
	yml, err := os.ReadFile(filepath.Join("..", "..", config.FileName))
	if err != nil {
		t.Fatal(err)
	}
	dl := filepath.Join(home, "Downloads", "artifact")
	for name, body := range map[string]string{
		"go.mod":            "module logjam\n\ngo 1.22\n",
		config.FileName:     string(yml),
		"cmd/simrt/main.go": "package main\n\nimport \"os\"\n\nfunc main() { os.WriteFile(" + `"` + marker + `"` + ", nil, 0o644) }\n",
	} {
		_ = os.MkdirAll(filepath.Join(dl, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dl, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prof := config.Profile{Name: "local", Deadline: 20 * time.Second, TimeoutScale: 1, Mode: "fast", Repeat: 1, GraceFloor: 2 * time.Second}
	dir := filepath.Join(dl, "evidence", "D1")
	b := report.Bundle{Cell: report.Cell{ID: "D1", Name: "deadlock D1 pystderr", Cell: scenario.Cell{Scenario: "D1", Policy: "pystderr"}, Expected: verdict.OK, Observed: verdict.Hang},
		Replay: &report.Replay{Cell: scenario.Cell{Scenario: "D1", Policy: "pystderr", Platform: "linux", Python: "3.12"}, Profile: prof, Binary: strings.Repeat("0", 64)}}
	if err := report.WriteBundle(dir, b); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dl)
	code, stderr := replayCapturingStderr(t, filepath.Join("evidence", "D1"))
	if code != 2 {
		t.Errorf("status %d, want 2; stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "\n"); n != 1 || !strings.Contains(stderr, "-source") {
		t.Errorf("stderr is %d lines, want one naming -source:\n%s", n, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the folder's child was built and run")
	}
	if entries, _ := os.ReadDir(cache); len(entries) > 0 {
		t.Errorf("something was built into the cache: %v", entries)
	}
}
