package telemetry

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The scan Parse makes of a line: validJSON is json.Valid (its grammar and
// its nesting limit), and eventHead reads the two members every event
// begins with, as json.Unmarshal would decode them. TestParseIsJSONUnmarshal
// and TestValidJSONIsJSONValid hold them to encoding/json.

// maxNesting is encoding/json's limit on nested objects and arrays.
const maxNesting = 10000

// validJSON says whether b is one JSON value, as json.Valid does: strings
// may hold any byte from 0x20 up (invalid UTF-8 too), escapes are JSON's,
// at most maxNesting objects and arrays are open at once.
func validJSON(b []byte) bool {
	i, ok := validValue(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '{' || c == '[':
		if depth++; depth > maxNesting {
			return i, false
		}
		end := byte(']')
		if c == '{' {
			end = '}'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == end {
			return i + 1, true
		}
		for {
			ok := true
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, false
				}
				if i, ok = validString(b, i); !ok {
					return i, false
				}
				if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = skipSpace(b, i+1)
			}
			if i, ok = validValue(b, i, depth); !ok {
				return i, false
			}
			if i = skipSpace(b, i); i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case end:
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == 't':
		return i + 4, bytes.HasPrefix(b[i:], []byte("true"))
	case c == 'f':
		return i + 5, bytes.HasPrefix(b[i:], []byte("false"))
	case c == 'n':
		return i + 4, bytes.HasPrefix(b[i:], []byte("null"))
	case c == '-' || '0' <= c && c <= '9':
		return validNumber(b, i)
	}
	return i, false
}

// validString checks the string token at b[i] ('"'), returning the index
// just past it.
func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i++; i >= len(b) {
				return i, false
			}
			switch b[i] {
			case 'b', 'f', 'n', 'r', 't', '\\', '/', '"':
			case 'u':
				if i+4 >= len(b) {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// validNumber checks the number at b[i]: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	ok := true
	if b[i] == '0' {
		i++
	} else if i, ok = digits(i); !ok {
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	return i, true
}

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
