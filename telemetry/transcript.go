package telemetry

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Transcript is one run's telemetry, decoded: the events in order and, per
// kind the judges read, the typed events (each with its Meta).
type Transcript struct {
	Events       []Event
	Start        Start // the first start event (zero when none)
	Lines        []Line
	Exceptions   []Exception
	Captures     []Capture
	Handlers     []Handler
	Signals      []Signal
	Callbacks    []Callback
	FatalFlushes []FatalFlush
	Marks        []Mark
	Aborts       []Abort
	// ScenarioErrors: the scenario refused to go on (at most one).
	ScenarioErrors []ScenarioError
}

// Decode decodes a run's events into a transcript. Events of a kind that do
// not decode into its type are left out of the typed lists (they stay in
// Events).
func Decode(events []Event) *Transcript {
	tr := &Transcript{Events: events}
	if s := All[Start](events); len(s) > 0 {
		tr.Start = s[0]
	}
	tr.Lines = lines(events)
	tr.Exceptions = All[Exception](events)
	tr.Captures = All[Capture](events)
	tr.Handlers = All[Handler](events)
	tr.Signals = All[Signal](events)
	tr.Callbacks = All[Callback](events)
	tr.FatalFlushes = All[FatalFlush](events)
	tr.Marks = All[Mark](events)
	tr.Aborts = All[Abort](events)
	tr.ScenarioErrors = All[ScenarioError](events)
	return tr
}

// All decodes every event of T's kind, in order, with its Meta set.
func All[T any, PT interface {
	*T
	Payload
	setMeta(at int, t float64)
}](events []Event) []T {
	var out []T
	var zero T
	kind := PT(&zero).Kind()
	for i, ev := range events {
		if ev.Ev != kind {
			continue
		}
		var v T
		if json.Unmarshal(ev.Raw, &v) != nil {
			continue
		}
		PT(&v).setMeta(i, ev.T)
		out = append(out, v)
	}
	return out
}

// As decodes one event into its typed payload; ok is false when the event
// is of another kind or does not decode.
func As[T any, PT interface {
	*T
	Payload
	setMeta(at int, t float64)
}](ev Event) (v T, ok bool) {
	if ev.Ev != PT(&v).Kind() || json.Unmarshal(ev.Raw, &v) != nil {
		return v, false
	}
	PT(&v).setMeta(0, ev.T)
	return v, true
}

// lines is All[Line], with each event the writer wrote (Encode's layout,
// names and strings as it writes them) read field by field; any other
// line is decoded by json.Unmarshal. TestLinesIsAllLine holds the two to
// the same values.
func lines(events []Event) []Line {
	var out []Line
	for i, ev := range events {
		if ev.Ev != KindLine {
			continue
		}
		v, ok := writtenLine(ev.Raw)
		if !ok {
			v = Line{}
			if json.Unmarshal(ev.Raw, &v) != nil {
				continue
			}
		}
		v.setMeta(i, ev.T)
		out = append(out, v)
	}
	return out
}

// writtenLine reads a line event laid out as Encode writes it, with
// strings of printable ASCII without escapes; ok is false for anything
// else (which json.Unmarshal then decodes, or refuses).
func writtenLine(raw []byte) (v Line, ok bool) {
	r := wireReader{b: raw, ok: true}
	r.lit(`{"ev":"line","t":`)
	r.number()
	r.lit(`,"seq":`)
	v.Seq = r.int()
	r.lit(`,"thread":`)
	v.Thread = r.str()
	r.lit(`,"daemon":`)
	v.Daemon = r.bool()
	r.lit(`,"level":`)
	v.Level = r.str()
	r.lit(`,"in_call":`)
	v.InCall = r.bool()
	r.lit(`,"replaced":`)
	v.Replaced = r.bool()
	r.lit(`,"b":`)
	if !r.null() {
		s := r.str()
		if r.ok {
			b, err := base64.StdEncoding.DecodeString(s)
			r.ok = err == nil
			v.B = b
		}
	}
	r.lit(`}`)
	return v, r.ok && r.i == len(raw)
}

// wireReader reads a line's tokens in the writer's layout; a token that is
// not there, or not in the plain form it reads, clears ok.
type wireReader struct {
	b  []byte
	i  int
	ok bool
}

func (r *wireReader) lit(s string) {
	if r.ok && bytes.HasPrefix(r.b[r.i:], []byte(s)) {
		r.i += len(s)
		return
	}
	r.ok = false
}

// number skips a JSON number (the writer's "t", which Meta takes from the
// Event).
func (r *wireReader) number() {
	if !r.ok || r.i >= len(r.b) || r.b[r.i] != '-' && (r.b[r.i] < '0' || r.b[r.i] > '9') {
		r.ok = false
		return
	}
	end := bytes.IndexByte(r.b[r.i:], ',') // the "seq" member follows
	if end < 0 {
		r.ok = false
		return
	}
	r.ok, r.i = json.Valid(r.b[r.i:r.i+end]), r.i+end
}

// int reads -?(0|[1-9][0-9]*) that an int holds.
func (r *wireReader) int() int {
	start, i := r.i, r.i
	if i < len(r.b) && r.b[i] == '-' {
		i++
	}
	digits := i
	for i < len(r.b) && '0' <= r.b[i] && r.b[i] <= '9' {
		i++
	}
	if !r.ok || i == digits || r.b[digits] == '0' && i > digits+1 {
		r.ok = false
		return 0
	}
	n, err := strconv.Atoi(string(r.b[start:i]))
	r.ok, r.i = err == nil, i
	return n
}

// str reads a string of printable ASCII with no escape.
func (r *wireReader) str() string {
	if !r.ok || r.i >= len(r.b) || r.b[r.i] != '"' {
		r.ok = false
		return ""
	}
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			s := string(r.b[r.i+1 : j])
			r.i = j + 1
			return s
		case c < 0x20 || c == '\\' || c >= utf8.RuneSelf:
			r.ok = false
			return ""
		}
	}
	r.ok = false
	return ""
}

func (r *wireReader) bool() bool {
	switch {
	case r.ok && bytes.HasPrefix(r.b[r.i:], []byte("true")):
		r.i += 4
		return true
	case r.ok && bytes.HasPrefix(r.b[r.i:], []byte("false")):
		r.i += 5
		return false
	}
	r.ok = false
	return false
}

func (r *wireReader) null() bool {
	if r.ok && bytes.HasPrefix(r.b[r.i:], []byte("null")) {
		r.i += 4
		return true
	}
	return false
}
