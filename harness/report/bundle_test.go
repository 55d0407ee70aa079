package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"logjam/failpoints"
	"logjam/internal/config"
	"logjam/scenario"
)

func sampleProfile() config.Profile {
	return config.Profile{Name: "local", Deadline: 20 * time.Second, TimeoutScale: 1, Mode: "fast", Repeat: 1, GraceFloor: 2 * time.Second}
}

func sampleReplay() *Replay {
	return &Replay{Cell: scenario.Cell{Scenario: "D1", Policy: "pystderr", Platform: "linux", Python: "3.12"}, Failpoints: "logjam/probe=return(1)",
		Profile: sampleProfile(), Binary: strings.Repeat("ab", 32)}
}

// writeSample leaves a valid bundle in a fresh folder and returns it.
func writeSample(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := WriteBundle(dir, Bundle{Cell: sample()[1], Stdout: []byte("done\n"), Replay: sampleReplay()}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editReplay rewrites replay.json's fields as a sender could.
func editReplay(t testing.TB, dir string, edit func(map[string]any)) {
	path := filepath.Join(dir, ReplayRecordFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every way a received bundle can lie is refused by the reader, with the
// field named; the untouched sample is accepted (so each refusal is the
// edit's doing).
func TestReadBundleRefusesWhatIsOutsideTheSchema(t *testing.T) {
	if _, err := ReadBundle(writeSample(t)); err != nil {
		t.Fatalf("the sample bundle is refused: %v", err)
	}
	set := func(k string, v any) func(string) {
		return func(dir string) { editReplay(t, dir, func(m map[string]any) { m[k] = v }) }
	}
	setProfile := func(k string, v any) func(string) {
		return func(dir string) {
			editReplay(t, dir, func(m map[string]any) { m["profile"].(map[string]any)[k] = v })
		}
	}
	write := func(name, body string) func(string) {
		return func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name  string
		craft func(dir string)
		want  string
	}{
		{"a digest that climbs out of the cache", set("binary_sha256", "../../../Downloads/b/payload"), "binary_sha256"},
		{"a digest in capitals", set("binary_sha256", strings.Repeat("AB", 32)), "binary_sha256"},
		{"a short digest", set("binary_sha256", "ab12"), "binary_sha256"},
		{"a module to build", set("module", "/tmp/evil"), `unknown field "module"`},
		{"an unknown field", set("exec", "sh -c id"), `unknown field "exec"`},
		{"an unknown scenario", set("scenario", "Z9"), "scenario"},
		{"an unknown policy", set("policy", "evil"), "policy"},
		{"an unknown platform", set("platform", "windows"), "platform"},
		{"an unknown python", set("python", "2.7"), "python"},
		{"an unknown buffering", set("buffering", "raw"), "buffering"},
		{"an unknown buffering in the old spelling", set("stderr", "raw"), "buffering"},
		{"an unknown variant", set("variant", "new"), "variant"},
		{"an unknown backend", set("backend", "tpu"), "backend"},
		{"a failpoint outside the catalogue", set("failpoints", "logjam/no-such-point=return(1)"), "failpoints"},
		{"a failpoint action outside its terms", set("failpoints", failpoints.Probe+"=panic"), "failpoints"},
		{"a schedule off scenario R", set("schedule", "e30="), "schedule"},
		{"a deadline of a day", set("deadline_ns", float64(24*time.Hour)), "deadline"},
		{"a negative deadline", set("deadline_ns", -1), "deadline"},
		{"a profile named with a path", setProfile("Name", "../x"), "profile"},
		{"a profile in no mode", setProfile("Mode", "turbo"), "mode"},
		{"a profile that waits a day", setProfile("TimeoutScale", 5000), "scaled deadline"},
		{"a profile with an unknown knob", setProfile("Hook", "x"), `unknown field "Hook"`},
		{"a record with more after it", func(dir string) {
			raw, _ := os.ReadFile(filepath.Join(dir, ReplayRecordFile))
			write(ReplayRecordFile, string(raw)+`{"scenario":"D1"}`)(dir)
		}, "more after"},
		{"a cell with an unknown field", func(dir string) {
			raw, _ := os.ReadFile(filepath.Join(dir, CellFile))
			write(CellFile, strings.Replace(string(raw), "{", `{"script":"x",`, 1))(dir)
		}, `unknown field "script"`},
		{"a replay.sh", write("replay.sh", "#!/bin/sh\ntouch /tmp/pwned\n"), "replay.sh"},
		{"a go.mod", write("go.mod", "module logjam\n"), "go.mod"},
		{"a folder inside", func(dir string) { _ = os.Mkdir(filepath.Join(dir, "cmd"), 0o755) }, "cmd"},
		{"a symlinked cell.json", func(dir string) {
			p := filepath.Join(dir, CellFile)
			_ = os.Rename(p, p+".real")
			_ = os.Symlink("/etc/passwd", p)
			_ = os.Rename(p+".real", filepath.Join(t.TempDir(), "elsewhere"))
		}, "not a regular file"},
		{"a symlinked fd2.bin", func(dir string) {
			p := filepath.Join(dir, FD2File)
			_ = os.Remove(p)
			_ = os.Symlink("/dev/zero", p)
		}, "not a regular file"},
		{"an oversize fd2.bin", func(dir string) {
			if err := os.Truncate(filepath.Join(dir, FD2File), MaxBundleData+1); err != nil {
				t.Fatal(err)
			}
		}, "more than it may hold"},
		{"an oversize replay.json", func(dir string) {
			if err := os.Truncate(filepath.Join(dir, ReplayRecordFile), MaxBundleRecord+1); err != nil {
				t.Fatal(err)
			}
		}, "more than it may hold"},
		{"no cell.json", func(dir string) { _ = os.Remove(filepath.Join(dir, CellFile)) }, "cell.json is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeSample(t)
			c.craft(dir)
			_, err := ReadBundle(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("the error is not one line: %q", err)
			}
		})
	}
}

// The reader never panics, and whatever it accepts names a digest, a
// scenario of the catalogue and failpoints of the catalogue.
func FuzzReadBundle(f *testing.F) {
	dir := writeSample(f)
	cell, _ := os.ReadFile(filepath.Join(dir, CellFile))
	replay, _ := os.ReadFile(filepath.Join(dir, ReplayRecordFile))
	f.Add(cell, replay, []byte(`{"ev":"exit","t":1,"code":0}`+"\n"))
	f.Add(cell, []byte(`{"scenario":"D1","binary_sha256":"../x","profile":{}}`), []byte("{"))
	f.Add([]byte(`{}`), []byte(`{"module":"/tmp"}`), []byte(nil))
	dir = f.TempDir() // one folder per worker, rewritten each time
	f.Fuzz(func(t *testing.T, cell, replay, tel []byte) {
		for name, body := range map[string][]byte{CellFile: cell, ReplayRecordFile: replay, TelemetryFile: tel, StdoutFile: nil, FD2File: nil} {
			if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b, err := ReadBundle(dir)
		if err != nil {
			return
		}
		r := b.Replay
		if r == nil {
			t.Fatal("replay.json was present but no Replay came back")
		}
		if !IsDigest(r.Binary) {
			t.Fatalf("accepted a digest %q", r.Binary)
		}
		if _, err := scenario.Lookup(r.Scenario); err != nil {
			t.Fatalf("accepted scenario %q", r.Scenario)
		}
		if _, err := failpoints.Parse(r.Failpoints); err != nil {
			t.Fatalf("accepted failpoints %q", r.Failpoints)
		}
		if r.Profile.ScaledDeadline() > MaxReplayDeadline || r.Deadline > MaxReplayDeadline {
			t.Fatalf("accepted a deadline beyond the bound: %+v", r)
		}
	})
}
