package sim

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"logjam/failpoints"
	"logjam/telemetry"
)

// Stream is a Python text stream that can be sys.stderr. Write is called
// with the GIL held and may release it inside, where CPython does.
type Stream interface {
	Name() string
	Write(t *Thread, s string) *PyErr
}

// Buffering is how Python opened sys.stderr on fd 2.
type Buffering string

// The bufferings of sys.stderr.
const (
	// Buffered (the default): TextIOWrapper -> BufferedWriter -> FileIO(2),
	// line buffered.
	Buffered Buffering = "buffered"
	// Unbuffered (python -u, PYTHONUNBUFFERED=1): sys.stderr.buffer is the
	// raw FileIO(2) and TextIOWrapper writes through to it.
	Unbuffered Buffering = "unbuffered"
)

// ParseBuffering validates a buffering ("" is Buffered).
func ParseBuffering(s string) (Buffering, error) {
	switch Buffering(s) {
	case "", Buffered:
		return Buffered, nil
	case Unbuffered:
		return Unbuffered, nil
	}
	return "", fmt.Errorf("unknown buffering %q (accepted: buffered, unbuffered)", s)
}

// OriginalStream is sys.__stderr__ on fd 2, with the GIL released around
// each write(2). Buffered: a line goes into the BufferedWriter (its size
// fd 2's st_blksize) and line buffering flushes it at once; the flush runs
// the signal handlers after each raw write that moved bytes
// (PyErr_CheckSignals in _bufferedwriter_flush_unlocked), and bytes an
// interrupted flush did not move stay in the buffer and go out with the
// next write (or at exit); only a write larger than the buffer loses the
// bytes it did not move. Buffered, a write and a flush hold the
// BufferedWriter's own lock throughout, its raw writes included (their
// write(2) with the GIL released): another thread's write waits for it with
// the GIL released (lock below). Unbuffered: one FileIO.write per text,
// whose short count TextIOWrapper ignores: an interrupted write returns
// success with the rest missing; FileIO has no lock, so two threads' writes
// can interleave on fd 2.
type OriginalStream struct {
	fd2        *FD2
	unbuffered bool
	bufSize    int
	// lock is the BufferedWriter's lock (ENTER_BUFFERED / LEAVE_BUFFERED in
	// Modules/_io/bufferedio.c), nil unbuffered. A thread that finds it held
	// releases the GIL and waits (_enter_buffered_busy): a wait of the
	// graph, so a cycle through it is reported. It is let go only with the
	// GIL held, so a thread that meets its fate at exit inside a write keeps
	// it for good: the finalizing thread's flush then dies (enter).
	lock *Lock

	mu      sync.Mutex
	pending []byte // the BufferedWriter's bytes not yet written
}

func newOriginalStream(g *Graph, fd2 *FD2, b Buffering) *OriginalStream {
	s := &OriginalStream{fd2: fd2, unbuffered: b == Unbuffered, bufSize: fd2.blksize}
	if !s.unbuffered {
		s.lock = g.NewLock(bufferedWriterLock)
	}
	return s
}

// bufferedWriterLock names the lock in the graph; bufferedWriterRepr is
// the stream as CPython's messages show it (%R).
const (
	bufferedWriterLock = "the lock of sys.stderr's BufferedWriter"
	bufferedWriterRepr = "<_io.BufferedWriter name='<stderr>'>"
)

// Name implements Stream.
func (s *OriginalStream) Name() string { return "sys.__stderr__" }

// Buffering is how the stream was opened.
func (s *OriginalStream) Buffering() Buffering {
	if s.unbuffered {
		return Unbuffered
	}
	return Buffered
}

// Write implements Stream: sys.stderr.write(text) (and the flush line
// buffering makes).
func (s *OriginalStream) Write(t *Thread, text string) *PyErr {
	first := true
	b := []byte(text)
	if s.unbuffered {
		_, err := s.rawWrite(t, b, &first) // a short count is ignored
		return err
	}
	// TextIOWrapper calls BufferedWriter.write, then (line buffering) its
	// flush: two holds of the lock with the GIL kept between them. The
	// model makes them one: CPython's lock is a semaphore that hands
	// nothing over, so a waiter would have to win it in the instant
	// between the two, against a holder that never stops running.
	if err := s.enter(t); err != nil {
		return err
	}
	err := s.writeLocked(t, b, &first)
	s.leave(t)
	return err
}

// writeLocked is the buffered write and its flush, the lock held.
func (s *OriginalStream) writeLocked(t *Thread, b []byte, first *bool) *PyErr {
	rest := append(s.takePending(), b...)
	for len(rest) > s.bufSize { // larger than the buffer: raw writes, no retention
		n, err := s.rawWrite(t, rest, first)
		if err != nil {
			return err
		}
		rest = rest[n:]
		if err := t.in.Signals.Check(t); err != nil {
			return err
		}
	}
	return s.flushBuffer(t, rest, first)
}

// enter is ENTER_BUFFERED: the lock at once if it is free. Else
// (_enter_buffered_busy) a reentrant call raises; otherwise the thread
// releases the GIL, waits for the lock (not a wait a signal ends), and
// takes the GIL back. Once finalization has started, the finalizing
// thread waits only 1 s and then dies with a fatal error: the owner lets
// the lock go only with the GIL held, which no other thread gets any more,
// so the model does not wait out the second. A forced unwind or a hang
// passes no LEAVE_BUFFERED (C frames, no cleanup): whoever met its fate
// inside a write keeps the lock.
func (s *OriginalStream) enter(t *Thread) *PyErr {
	if s.lock.TryAcquire(t) {
		return nil
	}
	if s.lock.HeldBy(t) {
		return &PyErr{Type: "RuntimeError", Msg: "reentrant call inside " + bufferedWriterRepr}
	}
	if t.in.Finalizing() {
		t.in.fatalError(t, "_enter_buffered_busy", "could not acquire lock for "+bufferedWriterRepr+
			" at interpreter shutdown, possibly due to daemon threads", s.lock)
	}
	// In flight until it waits for the lock: a holder that lets the GIL go
	// meanwhile waits for it to be queued there (ReleaseGILNative).
	t.ReleaseGILNative()
	s.lock.Acquire(t)
	t.AcquireGIL()
	return nil
}

// leave is LEAVE_BUFFERED (GIL held): the first waiter, if any, gets the lock.
func (s *OriginalStream) leave(t *Thread) { s.lock.Release(t) }

// flushBuffer writes b as the BufferedWriter's flush does; what an
// exception leaves unwritten stays in the buffer.
func (s *OriginalStream) flushBuffer(t *Thread, b []byte, first *bool) *PyErr {
	for len(b) > 0 {
		n, err := s.rawWrite(t, b, first)
		b = b[n:]
		if err == nil {
			err = t.in.Signals.Check(t)
		}
		if err != nil {
			s.retain(b)
			return err
		}
	}
	return nil
}

// Flush is sys.stderr.flush(): the bytes an interrupted write left in the
// BufferedWriter.
func (s *OriginalStream) Flush(t *Thread) *PyErr {
	if s.unbuffered {
		return nil
	}
	if err := s.enter(t); err != nil {
		return err
	}
	first := true
	err := s.flushBuffer(t, s.takePending(), &first)
	s.leave(t)
	return err
}

// rawWrite is FileIO.write (_Py_write): write(2) with the GIL released; on
// EINTR (on the thread the SIGINT landed on), the handlers run if that is
// the main thread and an exception they raise ends it, else it writes
// again. It returns the count one write(2) moved.
// *first marks the first write(2) of a sys.stderr.write: a SIGINT that
// arrived before it is the eval loop's (drained with the GIL released).
func (s *OriginalStream) rawWrite(t *Thread, b []byte, first *bool) (int, *PyErr) {
	for {
		t.ReleaseGILNative()
		if ms, ok := failpoints.Int(failpoints.PythonWriteGILDropped); ok && ms > 0 {
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
		if *first {
			*first = false
			s.fd2.beginWrite(t)
		}
		n, errno := s.fd2.writeCall(t, b, s.fd2.sigintLandsOn(t))
		t.AcquireGIL()
		switch errno {
		case 0:
			return n, nil
		case unix.EINTR:
			if err := t.in.Signals.Check(t); err != nil {
				return 0, err
			}
		default:
			return 0, s.refused(errno)
		}
	}
}

// refused is what a write(2) the kernel refused becomes in Python:
// FileIO.write raises OSError (BrokenPipeError for EPIPE: SIGPIPE is
// ignored, so EPIPE comes back as an error), which the BufferedWriter's
// flush passes on, keeping its bytes; EAGAIN makes FileIO.write return
// None, which the BufferedWriter turns into BlockingIOError, also keeping
// its bytes, and which TextIOWrapper ignores when it writes through (python
// -u): the text is silently gone.
func (s *OriginalStream) refused(errno unix.Errno) *PyErr {
	return RefusedWriteError(errno, s.Buffering())
}

// RefusedWriteError is what sys.__stderr__.write raises when the kernel
// refuses its write(2) with errno, under buffering b (nil: nothing is
// raised, the text is gone); when it raises and b is Buffered, the
// BufferedWriter keeps the text for its next write. calibrate checks it
// against real CPython (a closed pipe, /dev/full, a full non-blocking pipe).
func RefusedWriteError(errno unix.Errno, b Buffering) *PyErr {
	switch errno {
	case unix.EAGAIN:
		if b == Unbuffered {
			return nil
		}
		return &PyErr{Type: "BlockingIOError", Msg: "[Errno 11] write could not complete without blocking"}
	case unix.EPIPE:
		return &PyErr{Type: "BrokenPipeError", Msg: "[Errno 32] Broken pipe"}
	}
	return &PyErr{Type: "OSError", Msg: fmt.Sprintf("[Errno %d] %s", int(errno), errnoText(errno))}
}

// errnoText is strerror's text, as Python's OSError shows it.
func errnoText(e unix.Errno) string {
	s := e.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (s *OriginalStream) takePending() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	s.pending = nil
	return p
}

func (s *OriginalStream) retain(b []byte) {
	if len(b) == 0 {
		return
	}
	s.mu.Lock()
	s.pending = append(append([]byte(nil), b...), s.pending...)
	s.mu.Unlock()
	s.fd2.tel.Emit(telemetry.Retained{Bytes: len(b)})
}

// MemStream is an in-memory sys.stderr: io.StringIO under capsys,
// redirect_stderr, unittest --buffer and %%capture, or ipykernel's OutStream.
// Faults come from failpoints and model a Python-level write method.
type MemStream struct {
	name string
	// plain: not a sys.stderr (wurlitzer's sink), so the stream
	// failpoints, which fault sys.stderr's write, leave it alone.
	plain bool

	mu       sync.Mutex
	buf      strings.Builder
	attempts []Attempt

	// savedCopy is ipykernel's OutStream._original_stdstream_copy: the
	// descriptor of the old fd 2 its capture kept (-1 or unset: none).
	savedCopy    int
	hasSavedCopy bool
}

// SetOriginalStdstreamCopy gives the stream ipykernel's
// _original_stdstream_copy attribute: fd, its saved copy of the old fd 2.
func (m *MemStream) SetOriginalStdstreamCopy(fd int) { m.savedCopy, m.hasSavedCopy = fd, true }

// OriginalStdstreamCopy is the stream's _original_stdstream_copy, if it has
// one (an OutStream of ipykernel that captured fd 2).
func (m *MemStream) OriginalStdstreamCopy() (int, bool) {
	return m.savedCopy, m.hasSavedCopy && m.savedCopy >= 0
}

// Attempt is one call of write: the text offered, what was kept of it, and
// the exception raised, if any.
type Attempt = telemetry.Attempt

// NewMemStream returns an empty in-memory stream.
func NewMemStream(name string) *MemStream { return &MemStream{name: name} }

// NewPlainMemStream returns an empty in-memory stream that is not a
// sys.stderr: the stream failpoints never fault its writes (wurlitzer's
// sink; docs/RANDOM.md, "A slow sys.stderr is not wurlitzer's sink").
func NewPlainMemStream(name string) *MemStream { return &MemStream{name: name, plain: true} }

// Name implements Stream.
func (m *MemStream) Name() string { return m.name }

// Write implements Stream, applying the stream faults enabled by failpoints.
func (m *MemStream) Write(t *Thread, text string) *PyErr {
	if m.plain {
		m.record(text, len(text), "")
		return nil
	}
	if ms, ok := failpoints.Int(failpoints.StreamWriteDelay); ok && ms > 0 {
		// time.sleep inside write: the GIL is released while it sleeps.
		t.ReleaseGILNative()
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
