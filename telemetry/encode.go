package telemetry

import "encoding/json"

// Encode returns one event's line (without the newline), with "t" = ms:
// {"ev":p.Kind(),"t":ms, p's fields}, each part as encoding/json writes
// it; p's fields in one json.Marshal.
func Encode(p Payload, ms float64) ([]byte, error) {
	t, err := json.Marshal(ms)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	kind, err := json.Marshal(p.Kind())
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 16+len(kind)+len(t)+len(body))
	b = append(append(append(append(b, `{"ev":`...), kind...), `,"t":`...), t...)
	if len(body) > 2 {
		return append(append(b, ','), body[1:]...), nil
	}
	return append(b, '}'), nil
}
