// Package textout makes a foreign string (a cell's name, a failure
// message, a family, a verdict: anything read from a shard, a reports
// folder or a bundle) safe where logjam prints it. One function per place
// text lands:
//
//   - Terminal: a terminal, or any log. Control characters (C0, DEL, C1:
//     ESC and so every escape sequence, CR, newline, tab, BEL) and the
//     invisible characters that reorder or hide text (bidirectional
//     overrides and isolates, zero-width characters, the BOM) are shown
//     escaped, \x1b, \n, \u202e, never sent; invalid UTF-8 bytes are shown
//     as \xNN. Printable UTF-8 is kept as it is.
//   - CILine: a line of a CI log (GitHub Actions reads a line that begins
//     "::" as a workflow command, and "##[" as a legacy one): Terminal,
//     and such a beginning shown escaped.
//   - MarkdownCell and MarkdownCode: a markdown table cell (matrix.md, the
//     job summary), as text or as a code span.
package textout

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terminal is s with every control or invisible character shown escaped.
func Terminal(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100 && unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean says whether s needs no escape (the common case: no allocation).
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			return !strings.ContainsFunc(s, unsafe) && utf8.ValidString(s)
		}
	}
	return true
}

// unsafe is a rune a terminal would act on or that does not show: all but
// letters, marks, numbers, punctuation, symbols and the ASCII space
// (unicode.IsPrint), so control characters, format characters (bidi
// controls, zero-width characters, the BOM), other spaces, separators,
// private-use and unassigned code points.
func unsafe(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }

// CILine is Terminal, and a line that would begin a workflow command
// ("::" or "##[", after any blanks) begins escaped instead.
func CILine(s string) string {
	s = Terminal(s)
	t := strings.TrimLeft(s, " ")
	if strings.HasPrefix(t, "::") || strings.HasPrefix(t, "##[") {
		pre := len(s) - len(t)
		return s[:pre] + fmt.Sprintf(`\x%02x`, t[0]) + t[1:]
	}
	return s
}

// MarkdownCell is s as plain text in a markdown table cell: Terminal (so
// no newline ends the row), then each ASCII character that markdown or
// HTML reads inline backslash-escaped: | (the cell's end), < > & (tags and
// entities), backticks, * _ ~ (emphasis, code), [ ] ! (links, images), #
// (headings), $ (math), @ (mentions), and the backslash itself. No tag,
// link, heading, emphasis or code span comes out of it.
func MarkdownCell(s string) string {
	s = Terminal(s)
	if !strings.ContainsAny(s, mdSpecial) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(mdSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

const mdSpecial = "\\|<>&`*_~[]!#$@"

// MarkdownCode is s as a code span in a markdown table cell: Terminal,
// pipes escaped (GitHub reads \| inside a code span in a table as |), and
// a fence longer than any run of backticks in s. Nothing inside a code
// span is markup.
func MarkdownCode(s string) string {
	s = strings.ReplaceAll(Terminal(s), "|", `\|`)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
}
