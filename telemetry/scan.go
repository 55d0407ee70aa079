package telemetry

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The walk Parse makes of a line json.Valid passed: eventHead reads the
// two members every event begins with, as json.Unmarshal would decode
// them. TestParseIsJSONUnmarshal holds it to encoding/json.

// eventHead reads the "ev" and "t" members of a valid JSON object as
// json.Unmarshal into struct{ Ev *string; T *float64 } would: good is
// false where it would fail (an "ev" that is neither a string nor null, a
// "t" that is neither a number float64 holds nor null) or leave Ev nil.
func eventHead(obj []byte) (kind string, t float64, good bool) {
	hasKind := false
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		nameEnd := stringEnd(obj, i)
		name := obj[i:nameEnd]
		i = skipSpace(obj, nameEnd)
		i = skipSpace(obj, i+1) // the ':'
		valueEnd := valueEnd(obj, i)
		value := obj[i:valueEnd]
		switch {
		case foldedName(name, "ev"):
			switch value[0] {
			case '"':
				kind, hasKind = unquote(value), true
			case 'n':
				kind, hasKind = "", false
			default:
				return "", 0, false
			}
		case foldedName(name, "t"):
			switch value[0] {
			case 'n':
				t = 0
			case '"', '{', '[', 't', 'f':
				return "", 0, false
			default:
				f, err := strconv.ParseFloat(string(value), 64)
				if err != nil {
					return "", 0, false
				}
				t = f
			}
		}
		i = skipSpace(obj, valueEnd)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return kind, t, hasKind
}

// foldedName says whether a member's name (a JSON string token) is want
// (lower-case ASCII) in any case, as json.Unmarshal matches a field's name.
func foldedName(token []byte, want string) bool {
	if len(token) == len(want)+2 && bytes.IndexByte(token, '\\') < 0 {
		return bytes.EqualFold(token[1:len(token)-1], []byte(want))
	}
	return bytes.IndexByte(token, '\\') >= 0 && strings.EqualFold(unquote(token), want)
}

// unquote is a valid JSON string token's text, as json.Unmarshal gives it.
func unquote(token []byte) string {
	if bytes.IndexByte(token, '\\') < 0 && utf8.Valid(token) {
		return string(token[1 : len(token)-1])
	}
	var s string
	_ = json.Unmarshal(token, &s)
	return s
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just past the string token at b[i] (valid JSON).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd is the index just past the value at b[i] (valid JSON).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return len(b)
}
