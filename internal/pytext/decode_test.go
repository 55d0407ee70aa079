package pytext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeCases covers every class of ill-formed UTF-8 with the exact results of
// CPython 3.11 (b.decode('utf-8', 'backslashreplace'), and the start, end,
// reason and str() of the UnicodeDecodeError from b.decode('utf-8')).
var decodeCases = []struct {
	name    string
	in      string
	escaped string
	err     *UnicodeDecodeError // Object is filled in by the test
	message string
}{
	{"empty", "", "", nil, ""},
	{"ascii", "hello", "hello", nil, ""},
	{"valid 2-byte", "\xc3\xa9", "\xc3\xa9", nil, ""},
	{"valid 3-byte", "\xe2\x82\xac", "\xe2\x82\xac", nil, ""},
	{"valid 4-byte", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", nil, ""},
	{"valid boundaries", "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", nil, ""},
	{"U+FFFD itself is valid", "\xef\xbf\xbd", "\xef\xbf\xbd", nil, ""},
	{"lone continuation 0x80", "\x80", "\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0x80 in position 0: invalid start byte"},
	{"lone continuation 0xbf", "\xbf", "\\xbf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xbf in position 0: invalid start byte"},
	{"continuation run", "\x80\xbf\x80", "\\x80\\xbf\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0x80 in position 0: invalid start byte"},
	{"lone continuation in text", "a\x80b", "a\\x80b", &UnicodeDecodeError{Start: 1, End: 2, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0x80 in position 1: invalid start byte"},
	{"0xff", "\xff", "\\xff", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"},
	{"a 0xff b", "a\xffb", "a\\xffb", &UnicodeDecodeError{Start: 1, End: 2, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xff in position 1: invalid start byte"},
	{"0xc0 overlong lead", "\xc0", "\\xc0", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xc0 in position 0: invalid start byte"},
	{"0xc0 0xaf overlong slash", "\xc0\xaf", "\\xc0\\xaf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xc0 in position 0: invalid start byte"},
	{"0xc1 0xbf overlong", "\xc1\xbf", "\\xc1\\xbf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xc1 in position 0: invalid start byte"},
	{"0xf5 lead", "\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xf5 in position 0: invalid start byte"},
	{"0xf7 lead", "\xf7\xbf\xbf\xbf", "\\xf7\\xbf\\xbf\\xbf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xf7 in position 0: invalid start byte"},
	{"0xf8 5-byte lead", "\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xf8 in position 0: invalid start byte"},
	{"0xfc 6-byte lead", "\xfc\x84\x80\x80\x80\x80", "\\xfc\\x84\\x80\\x80\\x80\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xfc in position 0: invalid start byte"},
	{"0xfe", "\xfe", "\\xfe", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xfe in position 0: invalid start byte"},
	{"2-byte truncated at end", "\xc3", "\\xc3", &UnicodeDecodeError{Start: 0, End: 1, Reason: "unexpected end of data"}, "'utf-8' codec can't decode byte 0xc3 in position 0: unexpected end of data"},
	{"2-byte truncated in middle", "\xc3A", "\\xc3A", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xc3 in position 0: invalid continuation byte"},
	{"3-byte truncated at end after 1", "\xe2", "\\xe2", &UnicodeDecodeError{Start: 0, End: 1, Reason: "unexpected end of data"}, "'utf-8' codec can't decode byte 0xe2 in position 0: unexpected end of data"},
	{"3-byte truncated at end after 2", "\xe2\x82", "\\xe2\\x82", &UnicodeDecodeError{Start: 0, End: 2, Reason: "unexpected end of data"}, "'utf-8' codec can't decode bytes in position 0-1: unexpected end of data"},
	{"3-byte truncated in middle after 2", "\xe2\x82(", "\\xe2\\x82(", &UnicodeDecodeError{Start: 0, End: 2, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode bytes in position 0-1: invalid continuation byte"},
	{"3-byte truncated in middle after 1", "\xe2(", "\\xe2(", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xe2 in position 0: invalid continuation byte"},
	{"4-byte truncated at end after 3", "\xf0\x9f\x98", "\\xf0\\x9f\\x98", &UnicodeDecodeError{Start: 0, End: 3, Reason: "unexpected end of data"}, "'utf-8' codec can't decode bytes in position 0-2: unexpected end of data"},
	{"4-byte truncated at end after 2", "\xf0\x9f", "\\xf0\\x9f", &UnicodeDecodeError{Start: 0, End: 2, Reason: "unexpected end of data"}, "'utf-8' codec can't decode bytes in position 0-1: unexpected end of data"},
	{"4-byte truncated in middle after 3", "\xf0\x9f\x98(", "\\xf0\\x9f\\x98(", &UnicodeDecodeError{Start: 0, End: 3, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode bytes in position 0-2: invalid continuation byte"},
	{"4-byte truncated before a valid char", "\xf0\x9f\x98\xc3\xa9", "\\xf0\\x9f\\x98\xc3\xa9", &UnicodeDecodeError{Start: 0, End: 3, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode bytes in position 0-2: invalid continuation byte"},
	{"text then truncated tail", "ab\xe2\x82", "ab\\xe2\\x82", &UnicodeDecodeError{Start: 2, End: 4, Reason: "unexpected end of data"}, "'utf-8' codec can't decode bytes in position 2-3: unexpected end of data"},
	{"overlong 3-byte e0 80 af", "\xe0\x80\xaf", "\\xe0\\x80\\xaf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xe0 in position 0: invalid continuation byte"},
	{"overlong 3-byte e0 9f bf", "\xe0\x9f\xbf", "\\xe0\\x9f\\xbf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xe0 in position 0: invalid continuation byte"},
	{"overlong 3-byte truncated e0 80", "\xe0\x80", "\\xe0\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xe0 in position 0: invalid continuation byte"},
	{"overlong 4-byte f0 80 80 af", "\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xf0 in position 0: invalid continuation byte"},
	{"overlong 4-byte f0 8f bf bf", "\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xf0 in position 0: invalid continuation byte"},
	{"surrogate d800", "\xed\xa0\x80", "\\xed\\xa0\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xed in position 0: invalid continuation byte"},
	{"surrogate dfff", "\xed\xbf\xbf", "\\xed\\xbf\\xbf", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xed in position 0: invalid continuation byte"},
	{"surrogate truncated ed a0", "\xed\xa0", "\\xed\\xa0", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xed in position 0: invalid continuation byte"},
	{"surrogate pair", "\xed\xa0\xbd\xed\xb8\x80", "\\xed\\xa0\\xbd\\xed\\xb8\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xed in position 0: invalid continuation byte"},
	{"ed 9f bf is U+D7FF, valid", "\xed\x9f\xbf", "\xed\x9f\xbf", nil, ""},
	{"above U+10FFFF f4 90 80 80", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xf4 in position 0: invalid continuation byte"},
	{"above U+10FFFF truncated f4 90", "\xf4\x90", "\\xf4\\x90", &UnicodeDecodeError{Start: 0, End: 1, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode byte 0xf4 in position 0: invalid continuation byte"},
	{"4-byte bad third byte", "\xf1\x80A", "\\xf1\\x80A", &UnicodeDecodeError{Start: 0, End: 2, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode bytes in position 0-1: invalid continuation byte"},
	{"4-byte bad fourth byte", "\xf1\x80\x80A", "\\xf1\\x80\\x80A", &UnicodeDecodeError{Start: 0, End: 3, Reason: "invalid continuation byte"}, "'utf-8' codec can't decode bytes in position 0-2: invalid continuation byte"},
	{"mixed valid and invalid", "h\xc3\xa9llo\xff\xe2\x82\xac\xe2\x82 ok \xf0\x9f\x98\x80", "h\xc3\xa9llo\\xff\xe2\x82\xac\\xe2\\x82 ok \xf0\x9f\x98\x80", &UnicodeDecodeError{Start: 6, End: 7, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xff in position 6: invalid start byte"},
	{"backslash stays as is", "C:\x5cx\xff", "C:\\x\\xff", &UnicodeDecodeError{Start: 4, End: 5, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xff in position 4: invalid start byte"},
	{"program identifier", "Program identifier '\xff\xff\xff\xff'", "Program identifier '\\xff\\xff\\xff\\xff'", &UnicodeDecodeError{Start: 20, End: 21, Reason: "invalid start byte"}, "'utf-8' codec can't decode byte 0xff in position 20: invalid start byte"},
	{"cut CJK path", "Failed to open /tmp/\xe6\x97\xa5\xe6\x9c", "Failed to open /tmp/\xe6\x97\xa5\\xe6\\x9c", &UnicodeDecodeError{Start: 23, End: 25, Reason: "unexpected end of data"}, "'utf-8' codec can't decode bytes in position 23-24: unexpected end of data"},
}

func TestDecodeInvalidClassesTable(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			if got := DecodeEscaped(in); got != tc.escaped {
				t.Errorf("DecodeEscaped(%q) = %q, CPython gives %q", tc.in, got, tc.escaped)
			}
			text, err := DecodeStrict(in)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("DecodeStrict(%q) failed: %v; CPython decodes it", tc.in, err)
				}
				if text != tc.in {
					t.Errorf("DecodeStrict(%q) = %q, want the input back", tc.in, text)
				}
				return
			}
			if err == nil {
				t.Fatalf("DecodeStrict(%q) = %q, nil; CPython raises %s", tc.in, text, tc.message)
			}
			if text != "" {
				t.Errorf("DecodeStrict(%q) returned text %q with its error", tc.in, text)
			}
			if err.Start != tc.err.Start || err.End != tc.err.End || err.Reason != tc.err.Reason {
				t.Errorf("DecodeStrict(%q) error start=%d end=%d reason=%q, CPython start=%d end=%d reason=%q",
					tc.in, err.Start, err.End, err.Reason, tc.err.Start, tc.err.End, tc.err.Reason)
			}
			if string(err.Object) != tc.in {
				t.Errorf("error Object = %q, want the whole input %q", err.Object, tc.in)
			}
			if got := err.Error(); got != tc.message {
				t.Errorf("Error() = %q, CPython str(e) = %q", got, tc.message)
			}
		})
	}
}

func TestDecodeEscapedOutputIsValidText(t *testing.T) {
	for _, tc := range decodeCases {
		out := DecodeEscaped([]byte(tc.in))
		if !utf8.ValidString(out) || HasUnescapedInvalid(out) {
			t.Errorf("DecodeEscaped(%q) = %q is not valid UTF-8", tc.in, out)
		}
	}
}

func TestDecodeStrictObjectIsACopy(t *testing.T) {
	in := []byte("a\xffb")
	_, err := DecodeStrict(in)
	in[0] = 'z'
	if string(err.Object) != "a\xffb" {
		t.Errorf("error Object changed with the caller's slice: %q", err.Object)
	}
}

func TestHasUnescapedInvalid(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", false},
		{"plain", false},
		{`escaped \xff is text`, false},
		{"h\u00e9llo \U0001F600", false},
		{"raw \xff byte", true},
		{"cut \xe2\x82", true},
		{"surrogate \xed\xa0\x80", true},
	} {
		if got := HasUnescapedInvalid(tc.s); got != tc.want {
			t.Errorf("HasUnescapedInvalid(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// Long inputs exercise the eight-byte ASCII path on both sides of an error.
func TestDecodeEscapedLongRuns(t *testing.T) {
	ascii := strings.Repeat("abcdefgh", 9) + "xyz"
	in := []byte(ascii + "\xe2\x82" + ascii + "\xff" + "\u20ac" + ascii + "\xf0\x9f\x98")
	want := ascii + `\xe2\x82` + ascii + `\xff` + "\u20ac" + ascii + `\xf0\x9f\x98`
	if got := DecodeEscaped(in); got != want {
		t.Errorf("DecodeEscaped long input:\n got %q\nwant %q", got, want)
	}
	_, err := DecodeStrict(in)
	if err == nil || err.Start != len(ascii) || err.End != len(ascii)+2 || err.Reason != ReasonInvalidContinuation {
		t.Errorf("DecodeStrict long input: %+v", err)
	}
}
