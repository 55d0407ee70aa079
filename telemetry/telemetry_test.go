package telemetry

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseEvent(t *testing.T) {
	cases := []struct {
		line   string
		ok     bool
		kind   string
		tValue float64
	}{
		{`{"ev":"cycle","t":12.5,"text":"a waits for b"}`, true, KindCycle, 12.5},
		{`{"ev":"dump"}`, true, KindDump, 0},
		{`{"ev":"lockwait","t":3}` + "\r", true, "lockwait", 3},
		{"   ", false, "", 0},
		{`not json`, true, KindMalformed, 0},
		{`{"ev":""}`, true, KindMalformed, 0},
		{`{"ev":7}`, true, KindMalformed, 0},
		{`{"t":1}`, true, KindMalformed, 0},
		{`{"ev":"mark","t":"soon"}`, true, KindMalformed, 0},
		{`["ev","mark"]`, true, KindMalformed, 0},
		{`null`, true, KindMalformed, 0},
		{`{"ev":"mark"} trailing`, true, KindMalformed, 0},
		{"\xff\xfe", true, KindMalformed, 0},
	}
	for _, c := range cases {
		ev, ok := Parse([]byte(c.line))
		if ok != c.ok || ev.Ev != c.kind || ev.T != c.tValue {
			t.Errorf("%q: got (%q, t=%v, %v), want (%q, t=%v, %v)", c.line, ev.Ev, ev.T, ok, c.kind, c.tValue, c.ok)
		}
		if ok && !json.Valid(ev.Raw) {
			t.Errorf("%q: Raw %q is not valid JSON", c.line, ev.Raw)
		}
	}
}

func TestReadSurvivesAnOverlongLine(t *testing.T) {
	input := `{"ev":"mark","name":"before"}` + "\n" +
		`{"ev":"dump","junk":"` + strings.Repeat("x", maxEventBytes) + `"}` + "\n" +
		`{"ev":"mark","name":"after"}` + "\n" +
		`{"ev":"mark","name":"unterminated"}`
	var got []Event
	Read(strings.NewReader(input), func(ev Event) { got = append(got, ev) })
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Ev)
	}
	if k := strings.Join(kinds, ","); k != "mark,malformed,mark,mark" {
		t.Fatalf("events %s", k)
	}
	if len(got[1].Raw) > 2*malformedKeepBytes {
		t.Errorf("kept %d bytes of an over-long line", len(got[1].Raw))
	}
	if m, ok := As[Mark](got[3]); !ok || m.Name != "unterminated" {
		t.Errorf("last event %+v", m)
	}
	if got[1].Decode(new(Mark)) == nil {
		t.Error("decoding a malformed event succeeded")
	}
}

// The wire: "ev" and "t" first, the kind's fields after, and what the
// writer writes the decoder reads back into the same type.
func TestWriterAndTranscriptRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, time.Now())
	w.Emit(Start{Pid: 42, Policy: "logjam", Platform: "linux", Python: "3.12.0"})
	w.Emit(Line{Seq: 1, Thread: "MainThread", Level: "I", B: []byte("I 1 x.cpp:1] hi\n")})
	w.Emit(Mark{Name: MarkSIGINT})
	w.Emit(Exit{})
	if !strings.HasPrefix(buf.String(), `{"ev":"start","t":`) || !strings.Contains(buf.String(), `{"ev":"exit","t":`) {
		t.Fatalf("wire: %s", buf.String())
	}
	if strings.Contains(buf.String(), `"At"`) || strings.Contains(buf.String(), `"ms"`) {
		t.Fatalf("meta or an empty optional field on the wire: %s", buf.String())
	}
	var evs []Event
	Read(&buf, func(e Event) { evs = append(evs, e) })
	tr := Decode(evs)
	if tr.Start.Pid != 42 || len(tr.Lines) != 1 || string(tr.Lines[0].B) != "I 1 x.cpp:1] hi\n" || tr.Lines[0].At != 1 {
		t.Fatalf("transcript %+v", tr)
	}
	if len(tr.Marks) != 1 || tr.Marks[0].Name != MarkSIGINT || tr.Marks[0].At != 2 {
		t.Fatalf("marks %+v", tr.Marks)
	}
}

func TestDiscardWritesNothing(t *testing.T) {
	var w *Writer
	w.Emit(Exit{Code: 1})
	if w.Enabled() || Discard(time.Now()).Enabled() {
		t.Fatal("a discarding writer says it is enabled")
	}
}

// BenchmarkParse is a log line's event as the writer writes it.
//
//	go test -run '^$' -bench Parse ./telemetry/
func BenchmarkParse(b *testing.B) {
	line, _ := Encode(Line{Seq: 7, Thread: "MainThread", Level: "I", InCall: true, B: bytes.Repeat([]byte("x"), 128)}, 12.5)
	for b.Loop() {
		Parse(line)
	}
}
