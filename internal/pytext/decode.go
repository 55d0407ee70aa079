// Package pytext models how the bytes ExecuTorch's C code produces become
// Python text: CPython's UTF-8 decoder, strict and with the backslashreplace
// error handler, and the byte-exact cuts the C code makes before the bytes
// reach Python (the 256-byte logger buffer, the 128-byte exception buffer, the
// 1024-byte runtime-errors buffer).
//
// The decoder follows CPython's Objects/stringlib/codecs.h (utf8_decode) and
// Objects/unicodeobject.c (unicode_decode_utf8): an error covers the maximal
// subpart of an ill-formed sequence, and decoding resumes right after it.
package pytext

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The reasons CPython's UTF-8 decoder gives, exactly as Python prints them.
const (
	ReasonInvalidStart        = "invalid start byte"
	ReasonInvalidContinuation = "invalid continuation byte"
	ReasonUnexpectedEnd       = "unexpected end of data"
)

// UnicodeDecodeError is CPython's UnicodeDecodeError for the 'utf-8' codec.
// Object is the whole input; Object[Start:End] are the bytes the error covers.
type UnicodeDecodeError struct {
	Object     []byte
	Start, End int
	Reason     string
}

// Error formats the error as str(UnicodeDecodeError) does
// (Objects/exceptions.c, UnicodeDecodeError_str): one byte gets
// "byte 0xhh in position N", a longer span "bytes in position N-M".
func (e *UnicodeDecodeError) Error() string {
	if e.Start < len(e.Object) && e.End == e.Start+1 {
		return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s",
			e.Object[e.Start], e.Start, e.Reason)
	}
	return fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s",
		e.Start, e.End-1, e.Reason)
}

// DecodeStrict is bytes.decode('utf-8'): the text, or the error CPython raises
// for the first ill-formed sequence (no partial text, as Python returns none).
func DecodeStrict(b []byte) (string, *UnicodeDecodeError) {
	i := validPrefixLen(b)
	if i == len(b) {
		return string(b), nil
	}
	n, reason := invalidSequence(b, i)
	return "", &UnicodeDecodeError{
		Object: append([]byte(nil), b...),
		Start:  i,
		End:    i + n,
		Reason: reason,
	}
}

// DecodeEscaped is bytes.decode('utf-8', 'backslashreplace'): every byte of an
// ill-formed sequence becomes a lowercase \xhh escape (Python/codecs.c,
// PyCodec_BackslashReplaceErrors); valid input comes back unchanged. The result
// is always valid UTF-8.
func DecodeEscaped(b []byte) string {
	i := validPrefixLen(b)
	if i == len(b) {
		return string(b)
	}
	var out strings.Builder
	// Most inputs are mostly valid: room for the rest plus a few escapes.
	out.Grow(len(b) + (len(b)-i)/2 + 16)
	out.Write(b[:i])
	var esc [4]byte
	esc[0], esc[1] = '\\', 'x'
	for i < len(b) {
		n, _ := invalidSequence(b, i)
		for _, c := range b[i : i+n] {
			esc[2], esc[3] = hexDigits[c>>4], hexDigits[c&0x0f]
			out.Write(esc[:])
		}
		i += n
		run := i + validPrefixLen(b[i:])
		out.Write(b[i:run])
		i = run
	}
	return out.String()
}

// HasUnescapedInvalid reports whether s holds invalid UTF-8, that is raw bytes
// that reached "Python text" without being decoded. A real Python str can never
// hold them; the verdict code counts them as a BADESC.
func HasUnescapedInvalid(s string) bool {
	return !utf8.ValidString(s)
}

const hexDigits = "0123456789abcdef"

// validPrefixLen returns the length of the longest valid UTF-8 prefix of b.
// Go's utf8 package accepts exactly what CPython accepts (no surrogates, no
// overlongs, nothing above U+10FFFF), so it finds where CPython's first error is.
func validPrefixLen(b []byte) int {
	i := 0
	for i < len(b) {
		// ASCII runs, eight bytes at a time.
		for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
		}
		if i == len(b) {
			break
		}
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

func isContinuation(c byte) bool { return c&0xc0 == 0x80 }

// invalidSequence returns how many bytes CPython's error covers for the
// ill-formed sequence at b[i] (the caller knows it is ill-formed) and the reason.
// It mirrors the branches of utf8_decode in Objects/stringlib/codecs.h:
// InvalidStart covers 1 byte, InvalidContinuationK covers K bytes, and a
// sequence cut by the end of the input ("unexpected end of data") covers every
// byte left (unicode_decode_utf8 sets endinpos to the end).
func invalidSequence(b []byte, i int) (n int, reason string) {
	c := b[i]
	rest := len(b) - i
	switch {
	case c < 0xc2: // 0x80-0xBF continuation, 0xC0-0xC1 overlong lead
		return 1, ReasonInvalidStart
	case c < 0xe0: // 2-byte lead
		if rest < 2 {
			return rest, ReasonUnexpectedEnd
		}
		return 1, ReasonInvalidContinuation
	case c < 0xf0: // 3-byte lead
		if rest < 2 {
			return rest, ReasonUnexpectedEnd
		}
		c2 := b[i+1]
		// E0 80-9F is overlong, ED A0-BF a surrogate.
		if !isContinuation(c2) || (c == 0xe0 && c2 < 0xa0) || (c == 0xed && c2 >= 0xa0) {
			return 1, ReasonInvalidContinuation
		}
		if rest < 3 {
			return rest, ReasonUnexpectedEnd
		}
		return 2, ReasonInvalidContinuation
	case c < 0xf5: // 4-byte lead
		if rest < 2 {
			return rest, ReasonUnexpectedEnd
		}
		c2 := b[i+1]
		// F0 80-8F is overlong, F4 90-BF above U+10FFFF.
		if !isContinuation(c2) || (c == 0xf0 && c2 < 0x90) || (c == 0xf4 && c2 >= 0x90) {
			return 1, ReasonInvalidContinuation
		}
		if rest < 3 {
			return rest, ReasonUnexpectedEnd
		}
		if !isContinuation(b[i+2]) {
			return 2, ReasonInvalidContinuation
		}
		if rest < 4 {
			return rest, ReasonUnexpectedEnd
		}
		return 3, ReasonInvalidContinuation
	default: // 0xF5-0xFF never start a sequence
		return 1, ReasonInvalidStart
	}
}
