package watchdog

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// maxCapturedBytes bounds what Run keeps of one captured stream; the rest is
// counted in Result.StdoutOmitted / StderrOmitted. A child that floods its
// output until the deadline must not exhaust the parent's memory.
const maxCapturedBytes = 64 << 20

// markerLineSlack is how much whitespace around the marker a line may carry
// and still count as the marker line.
const markerLineSlack = 64

// markerScanner watches a byte stream for a line that is exactly the marker
// (surrounding whitespace, such as a "\r", ignored). A final line without a
// newline counts too.
type markerScanner struct {
	marker  []byte
	line    []byte // the current line, up to len(marker)+markerLineSlack bytes
	tooLong bool   // the current line has outgrown any match
	seen    bool
}

func newMarkerScanner(marker string) *markerScanner {
	return &markerScanner{marker: []byte(marker)}
}

func (m *markerScanner) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !m.tooLong {
			if len(m.line)+len(part) > len(m.marker)+markerLineSlack {
				m.tooLong = true
			} else {
				m.line = append(m.line, part...)
			}
		}
		if i < 0 {
			return
		}
		m.endLine()
		p = p[i+1:]
	}
}

func (m *markerScanner) endLine() {
	if !m.tooLong && bytes.Equal(bytes.TrimSpace(m.line), m.marker) {
		m.seen = true
	}
	m.line, m.tooLong = m.line[:0], false
}

// streamCapture copies one of the child's output pipes to the caller's writer
// (if any), keeps it for the Result (if Run owns the stream) and scans it for
// the marker (stdout).
type streamCapture struct {
	pipe     *os.File  // the parent's read end
	child    *os.File  // the child's write end, closed in the parent after Start
	out      io.Writer // the caller's writer, or nil
	keep     bool      // Run owns the stream: keep its bytes for the Result
	finished chan struct{}

	mu      sync.Mutex
	kept    []byte
	omitted int64
	marker  *markerScanner // nil when this stream is not scanned
	closed  bool           // Run took its snapshot; later bytes are not recorded
}

func newStreamCapture(out io.Writer, keep bool, marker *markerScanner) (*streamCapture, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s := &streamCapture{pipe: r, child: w, out: out, keep: keep, marker: marker, finished: make(chan struct{})}
	if keep {
		s.kept = []byte{} // captured but empty is not "not captured"
	}
	return s, nil
}

// copy runs until the pipe reaches EOF or is closed by Run.
func (s *streamCapture) copy() {
	defer close(s.finished)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.pipe.Read(buf)
		if n > 0 {
			s.record(buf[:n])
			if s.out != nil {
				// A failing caller writer must not stop the capture: the
				// child would block on a full pipe and look like a hang.
				_, _ = s.out.Write(buf[:n])
			}
		}
		if err != nil {
			break
		}
	}
	s.mu.Lock()
	if !s.closed && s.marker != nil {
		s.marker.endLine()
	}
	s.mu.Unlock()
}

func (s *streamCapture) record(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.marker != nil {
		s.marker.write(p)
	}
	if !s.keep {
		return
	}
	room := maxCapturedBytes - len(s.kept)
	if room < len(p) {
		s.omitted += int64(len(p) - max(room, 0))
		p = p[:max(room, 0)]
	}
	s.kept = append(s.kept, p...)
}

// snapshot stops recording and returns what was kept. It is safe while copy
// still runs (a copier stuck in the caller's writer is abandoned).
func (s *streamCapture) snapshot() (kept []byte, omitted int64, markerSeen bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.marker != nil {
		markerSeen = s.marker.seen
	}
	return s.kept, s.omitted, markerSeen
}
