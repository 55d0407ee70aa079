package sim

import (
	"encoding/json"
	"os"
	"sync"
	"time"
)

// Telemetry writes JSON lines to fd 3 when the parent opened it. It never
// writes to fd 2: fd 2 belongs to the system under test.
type Telemetry struct {
	mu    sync.Mutex
	f     *os.File
	start time.Time
}

// OpenTelemetry returns a writer on fd 3, or a writer that discards when fd 3
// is not open (the child run by hand).
func OpenTelemetry(start time.Time) *Telemetry {
	t := &Telemetry{start: start}
	if f := os.NewFile(3, "telemetry"); f != nil {
		if _, err := f.Stat(); err == nil {
			t.f = f
		}
	}
	return t
}

// Emit writes one event. Fields are merged with "ev" and "t".
func (t *Telemetry) Emit(ev string, fields map[string]any) {
	if t == nil || t.f == nil {
		return
	}
	m := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		m[k] = v
	}
	m["ev"] = ev
	m["t"] = float64(time.Since(t.start).Microseconds()) / 1000
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"ev": "malformed-event", "of": ev, "err": err.Error()})
	}
	b = append(b, '\n')
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.f.Write(b)
}

// Enabled reports whether anything reads the telemetry.
func (t *Telemetry) Enabled() bool { return t != nil && t.f != nil }
