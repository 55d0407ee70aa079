package cell

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"logjam/pipes"
	"logjam/scenario"
	"logjam/telemetry"
)

// ParentPipeSize is the capacity of the pipe a parent puts on the child's
// fd 2 (FD2ParentPipe): one page, as docs/SCENARIOS.md's pipe rows require.
const ParentPipeSize = 4096

// drainTimeout bounds the wait for the parent-side reader to reach EOF
// after the child's group is gone (the bytes are already in the kernel).
const drainTimeout = 5 * time.Second

// FD2 is the parent's end of the child's fd 2: a temporary file read after
// the run, or a pipe / pty drained by a pipes.Reader that the child's
// MarkFD2Pause and MarkFD2Resume marks pause and resume. The calibrate
// suite's real runs use it too: one owner of the arrangement.
type FD2 struct {
	child  *os.File // the child's fd 2; the parent closes its copy after the run
	file   *os.File // FD2File
	parent *os.File // the pipe's read end or the pty master
	reader *pipes.Reader

	mu     sync.Mutex
	timers []*time.Timer
	done   bool
	// ack tells the child the answer to its MarkFD2Read is in place
	// (AckReads); nil: the marks are not answered.
	ack func()
}

// AckReads makes the arrangement answer the child's MarkFD2Read: once the
// reader has read everything the pipe held, or at once while it is
// stalled, it calls ack (which sends the child signals.StallAck).
func (a *FD2) AckReads(ack func()) {
	a.mu.Lock()
	a.ack = ack
	a.mu.Unlock()
}

// ArrangeFD2 makes the child's fd 2 of that kind (a pipe of pipeSize
// bytes, one page when 0; a reader that starts stalled when stalled).
func ArrangeFD2(kind scenario.FD2, stalled bool, pipeSize int) (*FD2, error) {
	a := &FD2{}
	switch kind {
	case scenario.FD2File, "":
		f, err := os.CreateTemp("", "logjam-fd2-*")
		if err != nil {
			return nil, err
		}
		a.file, a.child = f, f
	case scenario.FD2ParentPipe:
		if pipeSize == 0 {
			pipeSize = ParentPipeSize
		}
		p, err := pipes.New(pipeSize)
		if err != nil {
			return nil, fmt.Errorf("fd 2 as a parent-drained pipe: %w", err)
		}
		a.child, a.parent = p.W, p.R
		a.reader = pipes.NewReader(p.R, pipes.ReaderOptions{Stalled: stalled})
	case scenario.FD2PTY:
		master, slave, err := pipes.OpenPTY()
		if err != nil {
			return nil, fmt.Errorf("fd 2 as a pty: %w", err)
		}
		a.child, a.parent = slave, master
		a.reader = pipes.NewReader(master, pipes.ReaderOptions{Stalled: stalled})
	default:
		return nil, fmt.Errorf("unknown fd-2 arrangement %q", kind)
	}
	return a, nil
}

// Child is the child's end, for exec.Cmd.Stderr.
func (a *FD2) Child() *os.File { return a.child }

// OnEvent reacts to the child's marks; it never blocks (a pause is a
// Stall now and a timer for the Resume; a stall is a Stall now, a resume a
// Resume now).
func (a *FD2) OnEvent(ev telemetry.Event) {
	if a.reader == nil {
		return
	}
	m, ok := telemetry.As[telemetry.Mark](ev)
	if !ok {
		return
	}
	switch m.Name {
	case telemetry.MarkFD2Pause, telemetry.MarkFD2Resume, telemetry.MarkFD2Stall, telemetry.MarkFD2Read,
		telemetry.MarkFD2Hold, telemetry.MarkFD2ReadHeld, telemetry.MarkFD2Release:
	default:
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	switch m.Name {
	case telemetry.MarkFD2Resume:
		a.reader.Resume()
		return
	case telemetry.MarkFD2Stall:
		a.reader.Stall() // until a resume; the caller acknowledges it (signals.StallAck)
		return
	case telemetry.MarkFD2Read:
		if a.ack != nil {
			go a.answerRead(a.ack)
		}
		return
	case telemetry.MarkFD2Hold:
		a.reader.Hold()
		if a.ack != nil {
			a.ack()
		}
		return
	case telemetry.MarkFD2ReadHeld:
		if a.ack != nil {
			go a.answerHeldRead(a.ack)
		}
		return
	case telemetry.MarkFD2Release:
		a.reader.Release()
		return
	}
	if m.Ms <= 0 {
		// Read again now: a timer of 0 would leave a mark asked after
		// this one (MarkFD2Read) to race the timer's goroutine.
		a.reader.Resume()
		return
	}
	a.reader.Stall()
	a.timers = append(a.timers, time.AfterFunc(time.Duration(m.Ms)*time.Millisecond, a.reader.Resume))
}

// answerRead answers a MarkFD2Read: it waits until the reader is stalled
// or the pipe holds nothing (the reader read it), then acks. The child's
// room check waits for the answer, so a reader the load kept off the CPU
// is waited for; a stalled or held one answers at once. A run that ended
// is not answered.
func (a *FD2) answerRead(ack func()) {
	if a.until(func() bool { return a.reader.Stalled() || a.reader.Held() || a.drained() }) {
		ack()
	}
}

// answerHeldRead answers a MarkFD2ReadHeld: once the reader is not
// stalled, it lets the held reader read until the pipe holds nothing,
// holds it again and acks. The child writes nothing meanwhile (it asks only
// when nothing else in it moves), so the read takes exactly what the model
// wrote. A run that ended is not answered.
func (a *FD2) answerHeldRead(ack func()) {
	if !a.until(func() bool { return !a.reader.Stalled() }) {
		return
	}
	a.reader.Grant()
	if !a.until(a.drained) {
		return
	}
	a.reader.Hold()
	ack()
}

// until polls cond (a condition polled, not a guessed delay) and reports
// whether it held before the run ended.
func (a *FD2) until(cond func() bool) bool {
	for {
		a.mu.Lock()
		done := a.done
		a.mu.Unlock()
		if done {
			return false
		}
		if cond() {
			return true
		}
		time.Sleep(time.Millisecond)
	}
}

// drained reports whether the parent's end holds nothing unread (or says
// nothing: an error ends the wait too).
func (a *FD2) drained() bool {
	n, err := pipes.QueuedFile(a.parent)
	return err != nil || n == 0
}

// Collect runs after the child's group is gone: it stops the pause timers,
// lets the reader read everything left to EOF, and returns the fd-2 bytes.
// Nothing of the arrangement is left open.
func (a *FD2) Collect() ([]byte, error) {
	a.mu.Lock()
	a.done = true
	for _, t := range a.timers {
		t.Stop()
	}
	a.mu.Unlock()
	if a.file != nil {
		defer os.Remove(a.file.Name())
		defer a.file.Close()
		return os.ReadFile(a.file.Name())
	}
	// The parent's copy of the child's end is the last writer (the pty's
	// last slave): closing it gives the reader EOF after the queued bytes.
	_ = a.child.Close()
	a.reader.Release()
	a.reader.Resume()
	err := a.reader.Wait(drainTimeout)
	if err != nil {
		a.reader.Stop()
	}
	b := a.reader.Bytes()
	_ = a.parent.Close()
	if err != nil && !errors.Is(err, pipes.ErrStopped) {
		return b, fmt.Errorf("reading fd 2 to EOF: %w", err)
	}
	return b, nil
}

// Abandon closes everything when the child never ran.
func (a *FD2) Abandon() { _, _ = a.Collect() }
