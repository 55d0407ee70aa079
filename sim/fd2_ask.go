package sim

import (
	"os"
	"os/signal"
	"sync"

	"logjam/signals"
	"logjam/telemetry"
)

// parentReader is the parent's reader of fd 2 as the child asks it things:
// a mark written on telemetry, answered with signals.StallAck once done
// (Options.ReaderAcks). One ask is open at a time (mu), so each StallAck
// answers the ask that waits for it.
type parentReader struct {
	acks  bool // the parent answers the marks (Options.ReaderAcks)
	tel   *telemetry.Writer
	mu    sync.Mutex
	once  sync.Once
	acked chan os.Signal
}

// answers reports whether a parent answers the marks.
func (r *parentReader) answers() bool { return r.acks && r.tel.Enabled() }

// ask writes mark for the parent and returns once the parent acknowledged
// it (signals.StallAck); false, at once, when no parent answers.
func (r *parentReader) ask(mark string) bool {
	if !r.answers() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.once.Do(func() {
		r.acked = make(chan os.Signal, 1)
		signal.Notify(r.acked, signals.StallAck)
	})
	r.tel.Emit(telemetry.Mark{Name: mark})
	<-r.acked
	return true
}

// AskStall asks the parent's reader to stop before its next read(2) and
// returns once it has (MarkFD2Stall); at once when no parent answers.
func (f *FD2) AskStall() { f.reader.ask(telemetry.MarkFD2Stall) }

// AskReader is a room check's end against a pipe the parent drains: it
// asks the parent's reader to read what the pipe holds unless it is
// stalled (MarkFD2Read) and returns true once the parent has answered, so
// a look at the pipe now finds room exactly when the reader reads on. How
// long a loaded machine kept the reader off the CPU decides nothing. False
// (nothing asked) for any other fd 2, one drained in-process (its drainer
// has barriers of its own), the reader held (readerHold.askUnheld), or no
// parent that answers.
func (f *FD2) AskReader() bool {
	if f.Kind != FDPipe || f.room.inProcess() {
		return false
	}
	return f.hold.askUnheld()
}
