package signals

import (
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"logjam/telemetry"
)

// Name returns the conventional name of sig ("SIGSEGV"), or "signal N".
func Name(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return "signal " + strconv.Itoa(int(sig))
}

// StallAck is the signal a parent sends the child once its reader of fd 2
// is stalled at the child's MarkFD2Stall (the child catches it; it is no
// Ctrl-C of the model).
const StallAck = syscall.SIGUSR1

// AtMark sends Signal to the child each time it writes a Mark named Mark,
// to the pid of the child's start event. Pass OnEvent as the watchdog's
// Config.OnEvent (it never blocks).
type AtMark struct {
	Signal syscall.Signal
	Mark   string

	mu   sync.Mutex
	pid  int
	sent int
}

// OnEvent reacts to one telemetry event.
func (a *AtMark) OnEvent(ev telemetry.Event) {
	if st, ok := telemetry.As[telemetry.Start](ev); ok {
		a.mu.Lock()
		a.pid = st.Pid
		a.mu.Unlock()
		return
	}
	if m, ok := telemetry.As[telemetry.Mark](ev); !ok || m.Name != a.Mark {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pid > 1 && unix.Kill(a.pid, a.Signal) == nil {
		a.sent++
	}
}

// Send sends Signal to the child now, as a Mark named Mark would (an
// answer that is ready only after some wait: cell.FD2.AckReads).
func (a *AtMark) Send() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pid > 1 && unix.Kill(a.pid, a.Signal) == nil {
		a.sent++
	}
}

// Sent is how many signals reached kill(2).
func (a *AtMark) Sent() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent
}

// ExecIgnoring sets sig to SIG_IGN and executes this program again with
// args: the new image starts with sig ignored. It returns only on failure.
func ExecIgnoring(sig syscall.Signal, args []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	signal.Ignore(sig)
	return unix.Exec(self, append([]string{os.Args[0]}, args...), os.Environ())
}

// Bridge calls deliver once for each real sig that reaches the process,
// from one goroutine, for the life of the process.
func Bridge(sig syscall.Signal, deliver func()) {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, sig)
	go func() {
		for range ch {
			deliver()
		}
	}()
}
