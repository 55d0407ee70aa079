package telemetry

import (
	"bytes"
	"math"
	"regexp"
	"testing"

	"pgregory.net/rapid"
)

// text draws strings the wire must escape as encoding/json does: control
// bytes, quotes, backslashes, <>&, U+2028 and U+2029, invalid UTF-8.
func text(name string) *rapid.Generator[string] {
	piece := rapid.OneOf(
		rapid.SampledFrom([]string{"", "a", "\"", "\\", "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
			"\u2028", "\u2029", "é", "€", "\U0001F600", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "I 1 x.cpp:1] hi"}),
		rapid.String(),
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 12), func(b []byte) string { return string(b) }),
	)
	return rapid.Custom(func(t *rapid.T) string {
		var b bytes.Buffer
		for _, p := range rapid.SliceOfN(piece, 0, 6).Draw(t, name) {
			b.WriteString(p)
		}
		if rapid.Bool().Draw(t, name+"-raw") {
			b.Write(rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, name+"-bytes"))
		}
		return b.String()
	})
}

func TestEncodeRefusesATimeJSONCannotWrite(t *testing.T) {
	for _, ms := range []float64{math.NaN(), math.Inf(1)} {
		if b, err := Encode(Line{}, ms); err == nil {
			t.Errorf("t=%v: encoded %s", ms, b)
		}
	}
}

// BenchmarkEncode is a log line's event, the kind a run writes most.
//
//	go test -run '^$' -bench Encode ./telemetry/
func BenchmarkEncode(b *testing.B) {
	line := Line{Seq: 7, Thread: "MainThread", Level: "I", InCall: true, B: bytes.Repeat([]byte("x"), 128)}
	for b.Loop() {
		_, _ = Encode(line, 12.5)
	}
}

func TestLinesIsAllLine(t *testing.T) {
	for _, seq := range []string{`0`, `01`, `-0`, `-01`, `1.0`, `1e2`, `-`, `9223372036854775807`, `9223372036854775808`, `"1"`, `null`} {
		raw := []byte(`{"ev":"line","t":1,"seq":` + seq + `,"thread":"T","daemon":false,"level":"I","in_call":true,"replaced":false,"b":"eA=="}`)
		events := []Event{{Ev: KindLine, Raw: raw}}
		if got, want := lines(events), All[Line](events); len(got) != len(want) || len(got) == 1 && got[0].Seq != want[0].Seq {
			t.Errorf("seq %s: got %+v, want %+v", seq, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "nil-b") {
			b = rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "b")
		}
		line := Line{Seq: rapid.Int().Draw(t, "seq"), Thread: text("thread").Draw(t, "thread"), Daemon: rapid.Bool().Draw(t, "daemon"),
			Level: text("level").Draw(t, "level"), InCall: rapid.Bool().Draw(t, "in_call"), Replaced: rapid.Bool().Draw(t, "replaced"), B: b}
		raw, err := Encode(line, rapid.Float64Range(0, 1e6).Draw(t, "ms"))
		if err != nil {
			t.Fatal(err)
		}
		switch rapid.IntRange(0, 5).Draw(t, "damage") {
		case 1:
			raw = raw[:rapid.IntRange(0, len(raw)).Draw(t, "cut")]
		case 2:
			raw[rapid.IntRange(0, len(raw)-1).Draw(t, "at")] = rapid.SampledFrom([]byte(`"\,:{}[] 0123456789-.eEtrufalsn+/=AZaz`)).Draw(t, "byte")
		case 3:
			at := rapid.IntRange(0, len(raw)).Draw(t, "insert-at")
			insert := rapid.SampledFrom([]string{` `, `,"b":null`, `,"seq":2`, `"`, `\`, `0`}).Draw(t, "insert")
			raw = append(raw[:at:at], append([]byte(insert), raw[at:]...)...)
		case 4:
			seq := rapid.SampledFrom([]string{`01`, `-0`, `1.0`, `1e2`, `-`, `9223372036854775808`, `-9223372036854775808`, `"1"`, `null`}).Draw(t, "seq-token")
			raw = regexp.MustCompile(`"seq":-?[0-9]+`).ReplaceAll(raw, []byte(`"seq":`+seq))
		}
		events := []Event{{Ev: KindLine, T: 1, Raw: raw}}
		got, want := lines(events), All[Line](events)
		if len(got) != len(want) || len(got) == 1 && (got[0].Seq != want[0].Seq || got[0].Thread != want[0].Thread || got[0].Daemon != want[0].Daemon ||
			got[0].Level != want[0].Level || got[0].InCall != want[0].InCall || got[0].Replaced != want[0].Replaced ||
			!bytes.Equal(got[0].B, want[0].B) || (got[0].B == nil) != (want[0].B == nil) || got[0].Meta != want[0].Meta) {
			t.Fatalf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
	})
}

// BenchmarkLines decodes a log line's event as the writer wrote it.
//
//	go test -run '^$' -bench Lines ./telemetry/
func BenchmarkLines(b *testing.B) {
	raw, _ := Encode(Line{Seq: 7, Thread: "MainThread", Level: "I", InCall: true, B: bytes.Repeat([]byte("x"), 128)}, 12.5)
	events := []Event{{Ev: KindLine, Raw: raw}}
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			lines(events)
		}
	})
	b.Run("unmarshalled", func(b *testing.B) {
		for b.Loop() {
			All[Line](events)
		}
	})
}
