package textout

import (
	"strings"
	"testing"
	"unicode"
)

func TestTerminalShowsControlsAndKeepsPrintableUTF8(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"D1 slug [policy=fd2 py=3.12]", "D1 slug [policy=fd2 py=3.12]"},
		{"é ü 日本 ✓ \\[x\\]", "é ü 日本 ✓ \\[x\\]"},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"bell\a nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`},
		{"c1 \u009b31m", `c1 \x9b31m`},
		{"osc52 \x1b]52;c;Y3VybA==\a", `osc52 \x1b]52;c;Y3VybA==\x07`},
		{"rtl \u202eexe.txt", `rtl \u202eexe.txt`},
		{"zero\u200bwidth \ufeff", `zero\u200bwidth \ufeff`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"line\u2028sep", `line\u2028sep`},
	} {
		if got := Terminal(c.in); got != c.want {
			t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Whatever the input, Terminal's output holds no byte a terminal acts on
// and no invisible rune.
func FuzzTerminal(f *testing.F) {
	f.Add("\x1b[31mred\n::error ::x")
	f.Add("\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Terminal(s)
		for _, r := range out {
			if !unicode.IsPrint(r) && r != ' ' {
				t.Fatalf("Terminal(%q) = %q holds %U", s, out, r)
			}
		}
		if l := CILine(s); strings.HasPrefix(strings.TrimLeft(l, " "), "::") || strings.HasPrefix(strings.TrimLeft(l, " "), "##[") {
			t.Fatalf("CILine(%q) = %q begins a workflow command", s, l)
		}
		md := MarkdownCell(s)
		for _, bad := range []string{"\n", "<", "|", "`"} {
			if i := strings.Index(md, bad); i >= 0 && (bad == "\n" || i == 0 || md[i-1] != '\\') {
				t.Fatalf("MarkdownCell(%q) = %q holds a bare %q", s, md, bad)
			}
		}
	})
}

func TestCILineNeverBeginsAWorkflowCommand(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"::error ::pwned", `\x3a:error ::pwned`},
		{"  ::add-mask::x", `  \x3a:add-mask::x`},
		{"##[error]x", `\x23#[error]x`},
		{"D1\n::error ::x", `D1\n::error ::x`},
		{"rerun: a::b", "rerun: a::b"},
	} {
		if got := CILine(c.in); got != c.want {
			t.Errorf("CILine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMarkdownKeepsAForeignStringInItsCell(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"D1 slug", "D1 slug"},
		{"a|b", `a\|b`},
		{"</details><img src=x onerror=alert(1)>", `\</details\>\<img src=x onerror=alert(1)\>`},
		{"x\n## heading", `x\\n\#\# heading`},
		{"[link](//evil.example)", `\[link\](//evil.example)`},
		{"r1 OK, r2 HANG (check failed)", "r1 OK, r2 HANG (check failed)"},
		{"@team $x$ ~~s~~ a\\b", `\@team \$x\$ \~\~s\~\~ a\\b`},
		{"`code` **b**", "\\`code\\` \\*\\*b\\*\\*"},
		{"&lt;", `\&lt;`},
	} {
		if got := MarkdownCell(c.in); got != c.want {
			t.Errorf("MarkdownCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"cd x && ./logjam", "` cd x && ./logjam `"},
		{"a | b", "` a \\| b `"},
		{"has ` tick", "`` has ` tick ``"},
		{"two\nlines</details>", "` two\\nlines</details> `"},
	} {
		if got := MarkdownCode(c.in); got != c.want {
			t.Errorf("MarkdownCode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
