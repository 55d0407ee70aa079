package telemetry

import (
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Writer writes events as JSON lines. The zero of a nil or discarding Writer
// is safe: Emit does nothing.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

// Open returns a writer on the descriptor named in FDEnv (the watchdog sets
// it; simrt's -telemetry-fd sets it by hand) when that is open for writing;
// otherwise a writer that discards. A descriptor the process merely
// inherited is never written to: an fd 3 a test runner or a shell left open
// is not a telemetry channel, and the Go runtime opens its cgroup CPU
// files, read-only, on the lowest free descriptors.
func Open(start time.Time) *Writer {
	s := os.Getenv(FDEnv)
	if s == "" {
		return Discard(start)
	}
	fd, err := strconv.Atoi(s)
	if err != nil || fd < 3 {
		return Discard(start)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_ACCMODE == unix.O_RDONLY {
		return Discard(start)
	}
	return NewWriter(os.NewFile(uintptr(fd), "telemetry"), start)
}

// NewWriter writes events to w; "t" counts from start.
func NewWriter(w io.Writer, start time.Time) *Writer { return &Writer{w: w, start: start} }

// Discard returns a writer that writes nothing.
func Discard(start time.Time) *Writer { return &Writer{start: start} }

// Enabled reports whether anything reads the events.
func (t *Writer) Enabled() bool { return t != nil && t.w != nil }

// Emit writes one event: {"ev":p.Kind(),"t":ms, p's fields}.
func (t *Writer) Emit(p Payload) {
	if !t.Enabled() {
		return
	}
	b, err := Encode(p, float64(time.Since(t.start).Microseconds())/1000)
	if err != nil {
		b, _ = Encode(MalformedEvent{Of: p.Kind(), Err: err.Error()}, 0)
	}
	b = append(b, '\n')
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.w.Write(b)
}
