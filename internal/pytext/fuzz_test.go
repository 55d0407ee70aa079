package pytext

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeEscaped checks the properties backslashreplace promises, and that
// DecodeStrict reports its error exactly where DecodeEscaped starts escaping.
func FuzzDecodeEscaped(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := DecodeEscaped(in)
		if !utf8.ValidString(out) {
			t.Fatalf("DecodeEscaped(%q) = %q is not valid UTF-8", in, out)
		}
		if again := DecodeEscaped([]byte(out)); again != out {
			t.Fatalf("DecodeEscaped changed its own valid output %q to %q", out, again)
		}
		text, err := DecodeStrict(in)
		if utf8.Valid(in) {
			if out != string(in) {
				t.Fatalf("valid input %q came back as %q", in, out)
			}
			if err != nil || text != string(in) {
				t.Fatalf("DecodeStrict(valid %q) = %q, %v", in, text, err)
			}
			return
		}
		if bytes.IndexByte(in, '\\') < 0 {
			if back := unescapeHexBytes(out); !bytes.Equal(back, in) {
				t.Fatalf("unescaping %q gives %q, not the input %q", out, back, in)
			}
		}
		if err == nil {
			t.Fatalf("DecodeStrict(invalid %q) raised nothing", in)
		}
		if err.Start < 0 || err.Start >= err.End || err.End > len(in) || err.End-err.Start > 3 {
			t.Fatalf("DecodeStrict(%q): bad span %d-%d", in, err.Start, err.End)
		}
		switch err.Reason {
		case ReasonInvalidStart, ReasonInvalidContinuation:
		case ReasonUnexpectedEnd:
			if err.End != len(in) {
				t.Fatalf("DecodeStrict(%q): unexpected end of data ending at %d of %d", in, err.End, len(in))
			}
		default:
			t.Fatalf("DecodeStrict(%q): reason %q", in, err.Reason)
		}
		// Everything before the error is valid text, copied as is; the error's
		// bytes are the first ones escaped.
		var escapes strings.Builder
		for _, c := range in[err.Start:err.End] {
			escapes.WriteString(`\x` + string(hexDigits[c>>4]) + string(hexDigits[c&0xf]))
		}
		if !strings.HasPrefix(out, string(in[:err.Start])+escapes.String()) {
			t.Fatalf("DecodeEscaped(%q) = %q does not start with the text before the error %d-%d and its escapes",
				in, out, err.Start, err.End)
		}
	})
}

// unescapeHexBytes turns every \xhh of s back into its byte.
func unescapeHexBytes(s string) []byte {
	unhex := func(c byte) (byte, bool) {
		switch {
		case '0' <= c && c <= '9':
			return c - '0', true
		case 'a' <= c && c <= 'f':
			return c - 'a' + 10, true
		}
		return 0, false
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			hi, ok1 := unhex(s[i+2])
			lo, ok2 := unhex(s[i+3])
			if ok1 && ok2 {
				out = append(out, hi<<4|lo)
				i += 3
				continue
			}
		}
		out = append(out, s[i])
	}
	return out
}
