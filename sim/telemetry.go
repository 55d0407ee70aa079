package sim

import (
	"encoding/json"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Telemetry writes JSON lines to fd 3 when the parent opened it. It never
// writes to fd 2: fd 2 belongs to the system under test.
type Telemetry struct {
	mu    sync.Mutex
	f     *os.File
	start time.Time
}

// OpenTelemetry returns a writer on the descriptor the watchdog names in
// WATCHDOG_TELEMETRY_FD or, run by hand, on fd 3 when it is open for
// writing (`simrt ... 3>telemetry.jsonl`); otherwise a writer that discards.
// An open fd 3 alone is not enough: the Go runtime opens its cgroup CPU
// files, read-only, on the lowest free descriptors.
func OpenTelemetry(start time.Time) *Telemetry {
	t := &Telemetry{start: start}
	fd := 3
	if s := os.Getenv("WATCHDOG_TELEMETRY_FD"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return t
		}
		fd = n
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_ACCMODE == unix.O_RDONLY {
		return t
	}
	t.f = os.NewFile(uintptr(fd), "telemetry")
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
