package pytext

import (
	"bytes"
	"strconv"
	"time"
)

// Buffer sizes of the C code the cuts model.
const (
	// LogBufferSize is kMaxLogMessageLength in runtime/platform/log.cpp: the
	// logger formats into char[256], so a message keeps at most 255 bytes.
	LogBufferSize = 256
	// ExceptionBufferSize is char msg_buf[128] in THROW_IF_ERROR
	// (extension/pybindings/pybindings.cpp): at most 127 bytes of text.
	ExceptionBufferSize = 128
	// RuntimeErrorsCapacity is kRuntimeErrorsCapacity: the bytes of Error-level
	// lines a call appends to its exception text.
	RuntimeErrorsCapacity = 1024
	// RuntimeErrorsSeparator goes between the exception's own message and the
	// appended Error-level lines.
	RuntimeErrorsSeparator = "\n"
)

// LogMessage models what ExecuTorch's core logger (runtime/platform/log.cpp,
// vlogf, since PR #14394) passes on for a formatted message: vsnprintf into
// char[256] keeps at most 255 bytes, then get_valid_utf8_prefix_length trims
// the tail. Invalid bytes in the middle pass through untouched.
//
// The trim is ExecuTorch's rule, not a validator, and is modelled with its
// quirks: it walks back over trailing continuation bytes (10xxxxxx) to the last
// byte that is not one (the "lead"); it keeps everything when the lead announces
// exactly as many bytes as are there (ASCII 1, 110xxxxx 2, 1110xxxx 3,
// 11110xxx 4), and otherwise cuts at the lead. So an incomplete character is
// dropped, but so is a tail lead 0xF8-0xFF ("a\xff" -> "a"), and an ASCII byte
// followed by stray continuation bytes goes with them ("ab\x80" -> "a").
// Overlong or surrogate tails of the right length ("\xc0\xaf") are kept.
// Before PR #14394 the logger put '$' at byte 254 of a cut message instead.
//
// The result is a new slice.
func LogMessage(msg []byte) []byte {
	n := min(len(msg), LogBufferSize-1)
	return append([]byte(nil), msg[:validUTF8PrefixLength(msg[:n])]...)
}

// validUTF8PrefixLength is get_valid_utf8_prefix_length in
// runtime/platform/log.cpp, byte for byte.
func validUTF8PrefixLength(b []byte) int {
	i := len(b)
	for i > 0 && isContinuation(b[i-1]) {
		i--
	}
	if i == 0 {
		return 0
	}
	leadPos := i - 1
	lead := b[leadPos]
	var need int
	switch {
	case lead < 0x80:
		need = 1
	case lead&0xe0 == 0xc0:
		need = 2
	case lead&0xf0 == 0xe0:
		need = 3
	case lead&0xf8 == 0xf0:
		need = 4
	default:
		return leadPos
	}
	if len(b)-leadPos == need {
		return len(b)
	}
	return leadPos
}

// FormatLine models the default POSIX PAL's et_pal_emit_log_message
// (runtime/platform/default/posix.cpp):
//
//	"%c %02u:%02u:%02u.%06lu executorch:%s:%zu] %s\n"
//
// with hours, minutes, seconds and microseconds from the time since
// et_pal_init (hours are not wrapped; nanoseconds below a microsecond are
// dropped). msg is the message LogMessage returned. Both %s stop at a NUL byte,
// as C strings do. A negative elapsed counts as 0 (the C clock never goes back);
// a negative line prints as the size_t it would convert to.
func FormatLine(level byte, elapsed time.Duration, file string, line int, msg []byte) []byte {
	ticks := max(elapsed.Nanoseconds(), 0)
	us := ticks / 1000
	sec := us / 1_000_000
	out := make([]byte, 0, 40+len(file)+len(msg))
	out = append(out, level, ' ')
	out = appendPadded(out, sec/3600, 2)
	out = append(out, ':')
	out = appendPadded(out, sec/60%60, 2)
	out = append(out, ':')
	out = appendPadded(out, sec%60, 2)
	out = append(out, '.')
	out = appendPadded(out, us%1_000_000, 6)
	out = append(out, " executorch:"...)
	out = append(out, cString([]byte(file))...)
	out = append(out, ':')
	out = strconv.AppendUint(out, uint64(line), 10)
	out = append(out, "] "...)
	out = append(out, cString(msg)...)
	return append(out, '\n')
}

// ExceptionMessage models THROW_IF_ERROR / THROW_INDEX_IF_ERROR
// (extension/pybindings/pybindings.cpp): snprintf into char msg_buf[128] keeps
// at most 127 bytes of the formatted message, cut anywhere, even inside a
// character; std::runtime_error(msg_buf) then reads it as a C string, so it
// also stops at a NUL byte. The result is a new slice.
func ExceptionMessage(formatted []byte) []byte {
	n := min(len(formatted), ExceptionBufferSize-1)
	return append([]byte(nil), cString(formatted[:n])...)
}

// AppendRuntimeErrors models how the bindings collect a call's Error-level log
// lines for its exception text: each whole line (newline included) is appended
// to the call's buffer until RuntimeErrorsCapacity bytes are held; the line that
// crosses the limit is cut at the byte where the room ends, even inside a
// character, and later lines are dropped. It returns the grown buffer.
//
// Model, not transcription: the real accumulation code was not found in the
// sources at hand (see the package report); this follows docs/FACTS.md (Error lines
// logged during the call are added to the exception's text, up to 1024
// bytes) and scenario U3 (the cut falls inside a character).
func AppendRuntimeErrors(buf []byte, line []byte) []byte {
	room := RuntimeErrorsCapacity - len(buf)
	if room <= 0 {
		return buf
	}
	return append(buf, line[:min(len(line), room)]...)
}

// FullExceptionText joins an exception's own message (ExceptionMessage) and the
// Error-level lines the call appended (AppendRuntimeErrors), as the bindings do
// before the text becomes the Python exception's message: the message alone
// when nothing was appended, otherwise message, RuntimeErrorsSeparator, lines.
// The result is a new slice.
func FullExceptionText(main, appended []byte) []byte {
	out := make([]byte, 0, len(main)+len(RuntimeErrorsSeparator)+len(appended))
	out = append(out, main...)
	if len(appended) == 0 {
		return out
	}
	out = append(out, RuntimeErrorsSeparator...)
	return append(out, appended...)
}

// cString returns b up to its first NUL byte, as C's %s and const char* read it.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// appendPadded appends v in decimal, zero-padded to width digits (%0Nu).
func appendPadded(out []byte, v int64, width int) []byte {
	var digits [20]byte
	s := strconv.AppendInt(digits[:0], v, 10)
	for i := len(s); i < width; i++ {
		out = append(out, '0')
	}
	return append(out, s...)
}
