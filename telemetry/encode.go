package telemetry

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Encode returns one event's line (without the newline), with "t" = ms:
// {"ev":p.Kind(),"t":ms, p's fields}, exactly as encoding/json writes them.
// The kinds a run writes one of per log line (Line and Route: most of a
// run's telemetry, thousands in a capture cell) are appended field by
// field; every other kind's fields go through json.Marshal.
// TestEncodeIsEncodingJSON holds the two to the same bytes.
func Encode(p Payload, ms float64) ([]byte, error) {
	if math.IsInf(ms, 0) || math.IsNaN(ms) {
		return marshalEvent(p, ms) // json.Marshal's error
	}
	switch v := p.(type) {
	case Line:
		b := make([]byte, 0, 96+len(v.Thread)+len(v.Level)+base64.StdEncoding.EncodedLen(len(v.B)))
		b = head(b, KindLine, ms)
		b = strconv.AppendInt(append(b, `,"seq":`...), int64(v.Seq), 10)
		b = appendString(append(b, `,"thread":`...), v.Thread)
		b = strconv.AppendBool(append(b, `,"daemon":`...), v.Daemon)
		b = appendString(append(b, `,"level":`...), v.Level)
		b = strconv.AppendBool(append(b, `,"in_call":`...), v.InCall)
		b = strconv.AppendBool(append(b, `,"replaced":`...), v.Replaced)
		b = append(b, `,"b":`...)
		if v.B == nil {
			b = append(b, "null"...)
		} else {
			b = append(base64.StdEncoding.AppendEncode(append(b, '"'), v.B), '"')
		}
		return append(b, '}'), nil
	case Route:
		b := make([]byte, 0, 64+len(v.Thread)+len(v.Route)+len(v.Why))
		b = head(b, KindRoute, ms)
		b = strconv.AppendInt(append(b, `,"seq":`...), int64(v.Seq), 10)
		b = appendString(append(b, `,"thread":`...), v.Thread)
		b = appendString(append(b, `,"route":`...), v.Route)
		b = appendString(append(b, `,"why":`...), v.Why)
		return append(b, '}'), nil
	}
	return marshalEvent(p, ms)
}

// marshalEvent is Encode through json.Marshal for p's fields.
func marshalEvent(p Payload, ms float64) ([]byte, error) {
	t, err := json.Marshal(ms)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	b := appendString(append(make([]byte, 0, 24+len(body)), `{"ev":`...), p.Kind())
	b = append(append(b, `,"t":`...), t...)
	if len(body) > 2 {
		b = append(b, ',')
		return append(b, body[1:]...), nil
	}
	return append(b, '}'), nil
}

// head is `{"ev":kind,"t":ms` (ms finite).
func head(b []byte, kind string, ms float64) []byte {
	b = appendString(append(b, `{"ev":`...), kind)
	return appendFloat(append(b, `,"t":`...), ms)
}

// appendFloat writes a finite float64 as encoding/json does (ES6's number
// to string: 'e' form below 1e-6 and from 1e21, with e-09 written e-9).
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string as encoding/json does with its
// default HTML escaping: <, > and & as \u00XX, control bytes escaped,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
