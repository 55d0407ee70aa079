package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxEventBytes bounds one telemetry line so a runaway child cannot exhaust
// the parent's memory; a longer line is kept (truncated) as a malformed event.
const maxEventBytes = 32 << 20

// malformedKeepBytes is how much of an over-long line is kept as evidence.
const malformedKeepBytes = 4 << 10

// Event is one telemetry line from the child.
type Event struct {
	Ev  string          `json:"ev"`  // the kind: one of the Kind constants, KindMalformed, or a producer's own
	T   float64         `json:"t"`   // ms since the child started, as the child wrote it; 0 when absent
	Raw json.RawMessage `json:"raw"` // the whole line as written (for KindMalformed: the line as a JSON string)
}

// Decode unmarshals the whole event into v, e.g. a struct with the fields
// of the kind at hand.
func (e Event) Decode(v any) error {
	if e.Ev == KindMalformed {
		return fmt.Errorf("telemetry: cannot decode a malformed telemetry line: %s", e.Raw)
	}
	return json.Unmarshal(e.Raw, v)
}

// Text returns the event's "text" field, or "" if it has none.
func (e Event) Text() string {
	var v struct {
		Text string `json:"text"`
	}
	if e.Decode(&v) != nil {
		return ""
	}
	return v.Text
}

// Parse turns one telemetry line into an Event. ok is false for a blank
// line, which carries nothing and is skipped. A line is an event when it is
// a JSON object whose "ev" is a non-empty string and whose "t", if any, is
// a number; anything else is a KindMalformed event. Only the two members
// are decoded: a run's lines are mostly log lines' events, whose "b" only
// the transcript's decoder reads.
func Parse(line []byte) (ev Event, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Event{}, false
	}
	var head struct {
		Ev *string  `json:"ev"`
		T  *float64 `json:"t"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Ev == nil || *head.Ev == "" || line[0] != '{' {
		return malformedEvent(line), true
	}
	ev = Event{Ev: *head.Ev, Raw: bytes.Clone(line)}
	if head.T != nil {
		ev.T = *head.T
	}
	return ev, true
}

func malformedEvent(line []byte) Event {
	raw, _ := json.Marshal(string(line)) // invalid UTF-8 becomes U+FFFD: Raw stays valid JSON
	return Event{Ev: KindMalformed, Raw: raw}
}

// Read calls handle for every event on r, in order, until r ends or
// fails. It never panics on bad input: whatever cannot be parsed becomes a
// KindMalformed event.
func Read(r io.Reader, handle func(Event)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case tooLong:
			// Skip the rest of an over-long line.
		case len(line)+len(chunk) > maxEventBytes:
			keep := append(line, chunk...)
			if len(keep) > malformedKeepBytes {
				keep = keep[:malformedKeepBytes]
			}
			handle(malformedEvent(keep))
			line, tooLong = line[:0], true
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !tooLong {
			if ev, ok := Parse(line); ok {
				handle(ev)
			}
		}
		line, tooLong = line[:0], false
		if err != nil {
			return
		}
	}
}
