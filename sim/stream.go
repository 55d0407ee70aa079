package sim

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"logjam/failpoints"
	"logjam/telemetry"
)

// PyErr is a Python exception.
type PyErr struct {
	Type string // RuntimeError, IndexError, KeyboardInterrupt, OSError, UnicodeDecodeError
	Msg  string
}

func (e *PyErr) Error() string { return e.Type + ": " + e.Msg }

// Traceback is what Python prints for an exception that escapes.
func (e *PyErr) Traceback() string {
	return "Traceback (most recent call last):\n  File \"<scenario>\", line 1, in <module>\n" + e.Type + ": " + e.Msg
}

// IsKeyboardInterrupt reports whether e is a KeyboardInterrupt.
func (e *PyErr) IsKeyboardInterrupt() bool { return e != nil && e.Type == "KeyboardInterrupt" }

// Stream is a Python text stream that can be sys.stderr. Write is called
// with the GIL held and may release it inside, where CPython does.
type Stream interface {
	Name() string
	Write(t *Thread, s string) *PyErr
}

// OriginalStream is sys.__stderr__: TextIOWrapper -> BufferedWriter ->
// FileIO(2), line buffered, so every line reaches write(2) at once, with the
// GIL released around the system call.
type OriginalStream struct{ fd2 *FD2 }

// Name implements Stream.
func (s *OriginalStream) Name() string { return "sys.__stderr__" }

// Write implements Stream: FileIO.write. On the main thread a pending
// signal interrupts a blocked write (EINTR): the GIL is retaken, the
// handlers run, and an exception they raise ends the write. Bytes the
// interrupted write did not reach are dropped, not kept for a later flush.
func (s *OriginalStream) Write(t *Thread, text string) *PyErr {
	b := []byte(text)
	t.ReleaseGIL()
	if ms, ok := failpoints.Int(failpoints.PythonWriteGILDropped); ok && ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	for len(b) > 0 {
		n, interrupted := s.fd2.write(t, b, t.Main)
		b = b[n:]
		if interrupted {
			t.AcquireGIL()
			if err := t.in.Signals.Check(t); err != nil {
				return err
			}
			t.ReleaseGIL()
		}
	}
	t.AcquireGIL()
	return nil
}

// MemStream is an in-memory sys.stderr: io.StringIO under capsys,
// redirect_stderr, unittest --buffer and %%capture, or ipykernel's OutStream.
// Faults come from failpoints and model a Python-level write method.
type MemStream struct {
	name string

	mu       sync.Mutex
	buf      strings.Builder
	attempts []Attempt
}

// Attempt is one call of write: the text offered, what was kept of it, and
// the exception raised, if any.
type Attempt = telemetry.Attempt

// NewMemStream returns an empty in-memory stream.
func NewMemStream(name string) *MemStream { return &MemStream{name: name} }

// Name implements Stream.
func (m *MemStream) Name() string { return m.name }

// Write implements Stream, applying the stream faults enabled by failpoints.
func (m *MemStream) Write(t *Thread, text string) *PyErr {
	if ms, ok := failpoints.Int(failpoints.StreamWriteDelay); ok && ms > 0 {
		// time.sleep inside write: the GIL is released while it sleeps.
		t.ReleaseGIL()
		time.Sleep(time.Duration(ms) * time.Millisecond)
		t.AcquireGIL()
	}
	if failpoints.On(failpoints.StreamWriteOSError) {
		m.record(text, 0, "OSError")
		return &PyErr{Type: "OSError", Msg: "[Errno 5] Input/output error"}
	}
	if how, ok := failpoints.String(failpoints.StreamWriteInterrupt); ok {
		n := 0
		if how == "half" {
			// Python slices code points; never cut inside a character.
			n = len(text) / 2
			for n > 0 && !utf8.RuneStart(text[n]) {
				n--
			}
		}
		m.record(text, n, "KeyboardInterrupt")
		return &PyErr{Type: "KeyboardInterrupt", Msg: ""}
	}
	m.record(text, len(text), "")
	return nil
}

func (m *MemStream) record(text string, n int, raised string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buf.WriteString(text[:n])
	m.attempts = append(m.attempts, Attempt{Text: text, Written: n, Raised: raised})
}

// Text is what the stream holds.
func (m *MemStream) Text() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.buf.String()
}

func (m *MemStream) report() telemetry.Capture {
	m.mu.Lock()
	defer m.mu.Unlock()
	return telemetry.Capture{Stream: m.name, Text: m.buf.String(), Attempts: m.attempts}
}
