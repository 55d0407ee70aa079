package pipes

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// DefaultChunkSize is how many bytes one read(2) asks for unless
// ReaderOptions.ChunkSize says otherwise.
const DefaultChunkSize = 4096

// ErrStopped is what Wait returns when Stop ended the reader before EOF.
var ErrStopped = errors.New("pipes: reader stopped before EOF")

// ReaderOptions configures NewReader.
type ReaderOptions struct {
	// ChunkSize is the most bytes one read(2) asks for; 0 means
	// DefaultChunkSize.
	ChunkSize int
	// Stalled starts the reader stalled, as if Stall were called before the
	// goroutine began.
	Stalled bool
}

// Reader is the parent side of a child's fd 2: it drains a file in its own
// goroutine into a buffer, and can be stalled, resumed or slowed to put
// back-pressure on the writer.
//
// No method blocks on the file: all waiting happens in the reader's
// goroutine. The goroutine first waits until the file is readable, then
// checks the stall gate, and only then calls read(2); so a Stall issued before
// data arrives is exact. A Stall that races with arriving data may let one
// chunk through: a read already past the gate, or already blocked in read(2)
// on a file Go cannot poll, completes first. Callers that need exactness stall
// before the data arrives (or use ReaderOptions.Stalled).
//
// On a pty master, read(2) fails with EIO once every slave descriptor is
// closed; the Reader treats that as EOF.
type Reader struct {
	f     *os.File
	chunk int

	mu      sync.Mutex
	idle    *sync.Cond // signalled when a read(2) past the gate ends (reading false)
	buf     []byte
	stalled bool
	// held: the reader reads only while granted (Hold, Grant, Release),
	// whatever Stall and Resume say; reading: a read(2) is past the gate.
	held, granted, reading bool
	slowChunk              int
	delay                  time.Duration
	stopped                bool
	result                 error // why the goroutine ended; nil means EOF
	finished               bool
	pollable               bool // f is in Go's poller, so a read deadline can wake it
	stopOnce               sync.Once
	wake                   chan struct{} // capacity 1: a token means "gate state changed"
	stopCh                 chan struct{} // closed by Stop
	done                   chan struct{} // closed when the goroutine has exited
}

// NewReader starts draining r. It does not take ownership of r: Stop leaves
// it open, and the caller closes it. It clears any read deadline on r.
func NewReader(r *os.File, opts ReaderOptions) *Reader {
	chunk := opts.ChunkSize
	if chunk <= 0 {
		chunk = DefaultChunkSize
	}
	rd := &Reader{
		f:       r,
		chunk:   chunk,
		stalled: opts.Stalled,
		wake:    make(chan struct{}, 1),
		stopCh:  make(chan struct{}),
		done:    make(chan struct{}),
	}
	rd.idle = sync.NewCond(&rd.mu)
	// A zero deadline is a no-op on a pollable file and fails with
	// os.ErrNoDeadline on one Go cannot poll (a blocking descriptor).
	rd.pollable = r.SetReadDeadline(time.Time{}) == nil
	go rd.run()
	return rd
}

// Stall stops reading before the next read(2). It is safe to call before any
// data arrives, and from any goroutine. A read already under way (past the
// gate, or blocked in read(2) on a file Go cannot poll) completes first, so
// one chunk may slip through unless Stall precedes the data.
func (r *Reader) Stall() {
	r.mu.Lock()
	r.stalled = true
	r.mu.Unlock()
}

// Resume undoes Stall.
func (r *Reader) Resume() {
	r.mu.Lock()
	r.stalled = false
	r.mu.Unlock()
	r.signal()
}

// Stalled reports whether the reader is stalled now (Stall, or started
// stalled, and no Resume since).
func (r *Reader) Stalled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stalled
}

// Hold stops reading, as Stall does, but apart from it: Resume does not
// end a hold, and a stall does not end with Release. Unlike Stall, it is
// exact: it returns once no read(2) is under way, so nothing more leaves
// the pipe until Grant or Release.
func (r *Reader) Hold() {
	r.mu.Lock()
	r.held, r.granted = true, false
	for r.reading {
		r.idle.Wait()
	}
	r.mu.Unlock()
}

// Held reports whether the reader is held (Hold, and no Release since).
func (r *Reader) Held() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Grant lets a held reader read (while not stalled) until the next Hold.
func (r *Reader) Grant() {
	r.mu.Lock()
	r.granted = true
	r.mu.Unlock()
	r.signal()
}

// Release ends a hold.
func (r *Reader) Release() {
	r.mu.Lock()
	r.held, r.granted = false, false
	r.mu.Unlock()
	r.signal()
}

// SetSlow makes the reader read at most chunk bytes per read(2) and wait
// delay between reads. A zero delay returns to normal reading; chunk <= 0
// keeps the reader's usual chunk size.
func (r *Reader) SetSlow(chunk int, delay time.Duration) {
	r.mu.Lock()
	r.slowChunk = chunk
	r.delay = delay
	r.mu.Unlock()
	r.signal()
}

// Bytes returns a copy of everything read so far.
func (r *Reader) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.buf...)
}

// Wait returns nil once the reader has reached EOF, the read error or
// ErrStopped if it ended otherwise, or an error wrapping
// os.ErrDeadlineExceeded if it is still running after timeout.
func (r *Reader) Wait(timeout time.Duration) error {
	select {
	case <-r.done:
		return r.outcome()
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-r.done:
		return r.outcome()
	case <-t.C:
		return fmt.Errorf("pipes: reader: no EOF within %v: %w", timeout, os.ErrDeadlineExceeded)
	}
}

// Stop ends reading and leaves the file open. On a file in Go's poller (every
// file this package creates) Stop wakes a goroutine waiting for data and
// returns after it has exited, with the file's read deadline cleared again.
// On a file Go cannot poll it returns at once, and the goroutine exits the
// next time the file becomes readable.
func (r *Reader) Stop() {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		r.stopped = true
		r.mu.Unlock()
		close(r.stopCh)
		if !r.pollable {
			return
		}
		if err := r.f.SetReadDeadline(time.Now()); err != nil {
			return // closed by the caller: the goroutine ends on its own
		}
		<-r.done
		_ = r.f.SetReadDeadline(time.Time{})
	})
}

func (r *Reader) signal() {
	select {
	case r.wake <- struct{}{}:
	default: // a token is already pending
	}
}

func (r *Reader) outcome() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.result
}

func (r *Reader) finish(err error) {
	r.mu.Lock()
	if !r.finished {
		r.finished = true
		r.result = err
	}
	r.mu.Unlock()
}

// gate returns once the reader may read (true) or has been stopped (false).
// It parks on the wake channel, never in a sleep loop.
func (r *Reader) gate() bool {
	for {
		r.mu.Lock()
		stopped, stalled := r.stopped, r.stalled || r.held && !r.granted
		r.mu.Unlock()
		if stopped {
			return false
		}
		if !stalled {
			return true
		}
		select {
		case <-r.wake:
		case <-r.stopCh:
		}
	}
}

// plan re-checks the gate after the file became readable and returns the
// size of the next read and the pause after it; ok is false when the reader
// was stalled or stopped meanwhile.
func (r *Reader) plan() (n int, delay time.Duration, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.stalled || r.held && !r.granted {
		return 0, 0, false
	}
	r.reading = true
	n = r.chunk
	if r.delay > 0 && r.slowChunk > 0 && r.slowChunk < n {
		n = r.slowChunk
	}
	return n, r.delay, true
}

func (r *Reader) isStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

func (r *Reader) run() {
	defer close(r.done)
	rc, err := r.f.SyscallConn()
	if err != nil {
		r.finish(fmt.Errorf("pipes: reader: %w", err))
		return
	}
	tmp := make([]byte, r.chunk)
	for {
		if !r.gate() {
			r.finish(ErrStopped)
			return
		}
		if err := waitReadable(rc, r.pollable); err != nil {
			if r.isStopped() {
				r.finish(ErrStopped)
			} else {
				r.finish(fmt.Errorf("pipes: reader: wait for data: %w", err))
			}
			return
		}
		n, delay, ok := r.plan()
		if !ok {
			continue // stalled or stopped while waiting: back to the gate
		}
		k, err := r.f.Read(tmp[:n])
		r.mu.Lock()
		r.buf = append(r.buf, tmp[:k]...)
		r.reading = false
		r.idle.Broadcast()
		r.mu.Unlock()
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, syscall.EIO):
			r.finish(nil)
			return
		case r.isStopped():
			r.finish(ErrStopped)
			return
		default:
			r.finish(fmt.Errorf("pipes: reader: %w", err))
			return
		}
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-r.stopCh:
				t.Stop()
				r.finish(ErrStopped)
				return
			}
		}
	}
}
