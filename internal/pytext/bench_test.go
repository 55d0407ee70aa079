package pytext

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// benchText is 64 KiB of log lines, mostly ASCII with some multi-byte text.
func benchText() []byte {
	line := "E 00:00:01.000123 executorch:runtime/executor/program.cpp:95] " +
		"Failed to load /data/\u65e5\u672c\u8a9e/model.pte: caf\u00e9 \U0001F600 error 0x22\n"
	text := []byte(strings.Repeat(line, 64*1024/len(line)+1)[:64*1024])
	return text[:len(text)-len(text)%len(line)] // whole lines only, so it is valid
}

// benchTextInvalid replaces 10% of the bytes of benchText with 0xFF, choosing
// only ASCII bytes so exactly those bytes are invalid.
func benchTextInvalid() []byte {
	text := benchText()
	rng := rand.New(rand.NewPCG(1, 2))
	for replaced := 0; replaced < len(text)/10; {
		if i := rng.IntN(len(text)); text[i] < utf8.RuneSelf {
			text[i] = 0xff
			replaced++
		}
	}
	return text
}

func BenchmarkDecode(b *testing.B) {
	for _, input := range []struct {
		name string
		text []byte
	}{
		{"valid", benchText()},
		{"invalid10pct", benchTextInvalid()},
	} {
		asString := string(input.text)
		b.Run(input.name+"/DecodeEscaped", func(b *testing.B) {
			b.SetBytes(int64(len(input.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = DecodeEscaped(input.text)
			}
		})
		b.Run(input.name+"/strings.ToValidUTF8", func(b *testing.B) {
			b.SetBytes(int64(len(asString)))
			b.ReportAllocs()
			for b.Loop() {
				_ = strings.ToValidUTF8(asString, "\uFFFD")
			}
		})
	}
}
