package pytext

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLogMessage(t *testing.T) {
	a254 := strings.Repeat("a", 254)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short text unchanged", "hello", "hello"},
		{"empty", "", ""},
		{"exactly 255 bytes kept whole", strings.Repeat("b", 255), strings.Repeat("b", 255)},
		{"256 bytes cut to 255", strings.Repeat("c", 256), strings.Repeat("c", 255)},
		{"long text cut to 255", strings.Repeat("d", 1000), strings.Repeat("d", 255)},
		{"cut inside a 3-byte char drops its start", a254 + "\u20ac tail", a254},
		{"cut inside a 4-byte char drops its start", strings.Repeat("a", 253) + "\U0001F600", strings.Repeat("a", 253)},
		{"char ending at byte 255 kept", strings.Repeat("a", 252) + "\u20ac" + "zz", strings.Repeat("a", 252) + "\u20ac"},
		{"invalid bytes in the middle pass", "Program identifier '\xff\xff\xff\xff'", "Program identifier '\xff\xff\xff\xff'"},
		{"surrogate in the middle passes", "x \xed\xa0\x80 y", "x \xed\xa0\x80 y"},
		{"incomplete tail trimmed even when short", "path /tmp/\xe6\x97", "path /tmp/"},
		{"complete tail kept", "path /tmp/\xe6\x97\xa5", "path /tmp/\xe6\x97\xa5"},
		// ExecuTorch's rule, quirks included (see LogMessage).
		{"tail lead 0xff dropped", "a\xff", "a"},
		{"tail lead 0xf8 with continuation dropped", "a\xf8\x80", "a"},
		{"overlong tail of the right length kept", "a\xc0\xaf", "a\xc0\xaf"},
		{"surrogate tail of the right length kept", "a\xed\xa0\x80", "a\xed\xa0\x80"},
		{"stray continuation takes the ASCII byte before it", "ab\x80", "a"},
		{"extra continuation after a full char drops the char", "a\xe2\x82\xac\x80", "a"},
		{"only continuation bytes", "\x80\x80", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got := LogMessage(in)
			if string(got) != tc.want {
				t.Errorf("LogMessage(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if len(got) > LogBufferSize-1 {
				t.Errorf("LogMessage kept %d bytes, the buffer holds %d", len(got), LogBufferSize-1)
			}
			if len(got) > 0 && &got[0] == &in[0] {
				t.Errorf("LogMessage returned the caller's slice")
			}
		})
	}
}

func TestFormatLine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		level   byte
		elapsed time.Duration
		file    string
		line    int
		msg     string
		want    string
	}{
		{"zero", 'I', 0, "program.cpp", 7, "hi", "I 00:00:00.000000 executorch:program.cpp:7] hi\n"},
		{"all fields", 'E', time.Hour + 2*time.Minute + 3*time.Second + 4*time.Microsecond + 999,
			"backends/xnnpack/runtime/XNNCompiler.cpp", 1812, "compileModel failed: 0x1",
			"E 01:02:03.000004 executorch:backends/xnnpack/runtime/XNNCompiler.cpp:1812] compileModel failed: 0x1\n"},
		{"hours are not wrapped", 'D', 123*time.Hour + 59*time.Minute + 59*time.Second + 999999*time.Microsecond,
			"f.c", 1, "x", "D 123:59:59.999999 executorch:f.c:1] x\n"},
		{"negative elapsed counts as zero", 'F', -time.Second, "f.c", 2, "boom", "F 00:00:00.000000 executorch:f.c:2] boom\n"},
		{"invalid bytes pass", '?', time.Millisecond, "f.c", 3, "id '\xff\xff'", "? 00:00:00.001000 executorch:f.c:3] id '\xff\xff'\n"},
		{"NUL ends the message", 'I', 0, "f.c", 4, "before\x00after", "I 00:00:00.000000 executorch:f.c:4] before\n"},
		{"NUL ends the file", 'I', 0, "f\x00.c", 5, "m", "I 00:00:00.000000 executorch:f:5] m\n"},
		{"empty message", 'I', 0, "f.c", 6, "", "I 00:00:00.000000 executorch:f.c:6] \n"},
		{"negative line prints as size_t", 'I', 0, "f.c", -1, "m", "I 00:00:00.000000 executorch:f.c:18446744073709551615] m\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FormatLine(tc.level, tc.elapsed, tc.file, tc.line, []byte(tc.msg))
			if string(got) != tc.want {
				t.Errorf("FormatLine = %q\n          want %q", got, tc.want)
			}
		})
	}
}

func TestExceptionMessage(t *testing.T) {
	prefix := "Failed to create MmapDataLoader from file /data/"
	cjkPath := prefix + strings.Repeat("\u65e5\u672c\u8a9e", 10) + ", error: 0x:22"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short unchanged", "Failed to load method forward, error: 0x:1", "Failed to load method forward, error: 0x:1"},
		{"exactly 127 kept", strings.Repeat("x", 127), strings.Repeat("x", 127)},
		{"128 cut to 127", strings.Repeat("x", 128), strings.Repeat("x", 127)},
		{"cut inside a character", cjkPath, cjkPath[:127]},
		{"NUL ends it", "abc\x00def", "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ExceptionMessage([]byte(tc.in))
			if string(got) != tc.want {
				t.Errorf("ExceptionMessage = %q, want %q", got, tc.want)
			}
		})
	}

	// The U2 scenario: the cut falls inside a character, so the strict decode
	// raises where the bindings meant to raise RuntimeError, and the escaped
	// decode shows the stray bytes.
	cut := ExceptionMessage([]byte(cjkPath))
	if len(cut) != 127 {
		t.Fatalf("cut length %d", len(cut))
	}
	_, err := DecodeStrict(cut)
	if err == nil || err.Reason != ReasonUnexpectedEnd || err.End != 127 {
		t.Fatalf("DecodeStrict(cut message) = %v, want unexpected end of data at the tail", err)
	}
	esc := DecodeEscaped(cut)
	if HasUnescapedInvalid(esc) || !strings.HasSuffix(esc, fmt.Sprintf(`\x%02x`, cut[len(cut)-1])) {
		t.Errorf("DecodeEscaped(cut message) = %q", esc)
	}
}

func TestAppendRuntimeErrors(t *testing.T) {
	line := []byte("E 00:00:01.000000 executorch:XNNCompiler.cpp:1812] compileModel failed: 0x1\n")
	var buf []byte
	lines := 0
	for len(buf)+len(line) <= RuntimeErrorsCapacity {
		buf = AppendRuntimeErrors(buf, line)
		lines++
	}
	if want := bytes.Repeat(line, lines); !bytes.Equal(buf, want) {
		t.Fatalf("whole lines not kept verbatim")
	}
	full := len(buf)
	buf = AppendRuntimeErrors(buf, line)
	if len(buf) != RuntimeErrorsCapacity {
		t.Fatalf("after the crossing line: %d bytes, want %d", len(buf), RuntimeErrorsCapacity)
	}
	if !bytes.Equal(buf[full:], line[:RuntimeErrorsCapacity-full]) {
		t.Errorf("crossing line not cut at the room left: %q", buf[full:])
	}
	if again := AppendRuntimeErrors(buf, line); len(again) != RuntimeErrorsCapacity {
		t.Errorf("a full buffer grew to %d", len(again))
	}
	if again := AppendRuntimeErrors(buf, nil); len(again) != RuntimeErrorsCapacity {
		t.Errorf("appending nothing changed the buffer")
	}

	// The U3 scenario: the cut at 1024 bytes falls inside a character.
	filler := bytes.Repeat([]byte("e"), RuntimeErrorsCapacity-1)
	cjk := AppendRuntimeErrors(AppendRuntimeErrors(nil, filler), []byte("\u65e5\n"))
	if len(cjk) != RuntimeErrorsCapacity || cjk[len(cjk)-1] != 0xe6 {
		t.Fatalf("cut inside a character: tail %q", cjk[len(cjk)-4:])
	}
	if !HasUnescapedInvalid(string(cjk)) || HasUnescapedInvalid(DecodeEscaped(cjk)) {
		t.Errorf("cut buffer: the raw bytes must be invalid and the escaped text valid")
	}
}

func TestFullExceptionText(t *testing.T) {
	main := []byte("Failed to load method forward, error: 0x:1")
	if got := FullExceptionText(main, nil); !bytes.Equal(got, main) {
		t.Errorf("nothing appended: %q", got)
	}
	appended := []byte("E 00:00:00.000001 executorch:a.cpp:1] first\nE 00:00:00.000002 executorch:a.cpp:2] second\n")
	want := string(main) + RuntimeErrorsSeparator + string(appended)
	if got := FullExceptionText(main, appended); string(got) != want {
		t.Errorf("FullExceptionText = %q, want %q", got, want)
	}
	got := FullExceptionText(main[:4], nil)
	got = append(got, 'X')
	if main[4] == 'X' {
		t.Errorf("FullExceptionText aliases its input")
	}
}
