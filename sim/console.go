package sim

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"syscall"

	"logjam/signals"
	"logjam/telemetry"
)

// Console is the terminal of a person who runs a child by hand (the child
// opens /dev/tty when no watchdog started it). fd 2 belongs to the system
// under test and stdout to the script's prints, so what the person must
// see goes here: a wait-for cycle the moment it forms, what Ctrl-C does,
// and on Ctrl-\ the lock table and every thread's stack, after which the
// process ends by SIGQUIT. Lines are written by one goroutine, so a stopped
// terminal never blocks the threads of the model.
type Console struct {
	w     io.Writer
	lines chan string
}

// The key hints the console prints.
const (
	quitHint = `Ctrl-\ prints the lock table and every thread's stack here and ends the process`
	intHint  = "Ctrl-C is the simulated program's SIGINT: its Python handler runs at the next check, which a hung program never reaches"
)

func newConsole(w io.Writer) *Console {
	if w == nil {
		return nil
	}
	c := &Console{w: w, lines: make(chan string, 64)}
	go func() {
		for l := range c.lines {
			_, _ = io.WriteString(c.w, l)
		}
	}()
	return c
}

// printf queues a line; it never blocks (a full queue drops the line).
func (c *Console) printf(format string, args ...any) {
	if c == nil {
		return
	}
	select {
	case c.lines <- "simrt: " + fmt.Sprintf(format, args...) + "\n":
	default:
	}
}

// attach wires the console to the runtime: cycles, SIGINTs and SIGQUIT.
func (c *Console) attach(rt *Runtime) {
	if c == nil {
		return
	}
	rt.G.mu.Lock()
	rt.G.onCycle = func(cy Cycle) {
		c.printf("%s\nsimrt: the process hangs here, as the real one would. %s; %s.", cy.Text, quitHint, intHint)
	}
	rt.G.mu.Unlock()
	rt.In.Signals.mu.Lock()
	rt.In.Signals.onArrival = func() { c.printf("SIGINT: %s. %s.", intHint, quitHint) }
	rt.In.Signals.mu.Unlock()
}

// quit answers Ctrl-\ by hand: the dump to telemetry (if anything reads
// it) and to the console, written before the process ends by SIGQUIT's
// default action.
func (c *Console) quit(rt *Runtime, d telemetry.Dump) {
	var b strings.Builder
	b.WriteString("simrt: Ctrl-\\ (SIGQUIT): the lock table\n")
	for _, t := range d.Locks.Threads {
		fmt.Fprintf(&b, "  thread %s", t.Name)
		if t.Daemon {
			b.WriteString(" (daemon)")
		}
		if t.Ended {
			b.WriteString(" (ended)")
		}
		if p := t.Phrase(); p != "" {
			b.WriteString(" " + p)
		}
		b.WriteString("\n")
	}
	b.WriteString("simrt: every goroutine's stack\n" + d.Stacks + "\nsimrt: ended by Ctrl-\\ (SIGQUIT)\n")
	_, _ = io.WriteString(c.w, b.String())
	signals.DieBy(syscall.SIGQUIT)
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
