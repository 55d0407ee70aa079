package telemetry

import "encoding/json"

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
	tr.Lines = All[Line](events)
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
