package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopWithin is how long the families get, after the first Ctrl-C, to stop
// their cells and write their reports; then their process groups are
// killed.
const stopWithin = 15 * time.Second

// stopper is logjam chaos's answer to Ctrl-C (and SIGTERM, SIGHUP,
// SIGQUIT). Every spec process runs in its own process group, so a Ctrl-C
// on the terminal reaches logjam alone. The first signal stops the build
// and is passed on once to each spec process as a SIGINT (Ginkgo stops
// the running cell, kills its child and writes its report); a second
// signal, a SIGQUIT, or stopWithin kills the groups. A group is killed too
// when its process exits, and logjam is the child subreaper (Linux), so
// close finds and kills what left the groups: nothing the run started
// outlives it.
type stopper struct {
	signals     chan os.Signal
	interrupted chan struct{} // closed at the first signal
	finished    chan struct{}
	loopDone    chan struct{}
	cancelBuild context.CancelFunc
	errw        io.Writer

	closeOnce sync.Once

	mu      sync.Mutex
	first   os.Signal
	killing bool
	running map[*exec.Cmd]bool // started command -> whether a first signal is passed on
}

// relayWindow: the same signal again this soon after the first is the
// first one relayed, not a second Ctrl-C: a terminal signals the whole
// process group, and a wrapper in it (go tool, which runs the README's
// command) passes on what it gets.
const relayWindow = 300 * time.Millisecond

func newStopper(cancelBuild context.CancelFunc, errw io.Writer) *stopper {
	becomeSubreaper()
	s := &stopper{signals: make(chan os.Signal, 4), interrupted: make(chan struct{}), finished: make(chan struct{}),
		loopDone: make(chan struct{}), cancelBuild: cancelBuild, errw: errw, running: map[*exec.Cmd]bool{}}
	signal.Notify(s.signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go s.loop()
	return s
}

func (s *stopper) loop() {
	defer close(s.loopDone)
	var deadline <-chan time.Time
	var firstAt time.Time
	for {
		select {
		case sig := <-s.signals:
			s.mu.Lock()
			first := s.first == nil
			if first {
				s.first, firstAt = sig, time.Now()
			}
			relayed := !first && sig == s.first && time.Since(firstAt) < relayWindow
			s.mu.Unlock()
			if relayed {
				continue // the same Ctrl-C, passed on by a wrapper
			}
			if first && sig != syscall.SIGQUIT {
				fmt.Fprintf(s.errw, "\nlogjam: %s: stopping the families (again to kill them now)\n", signalName(sig))
				close(s.interrupted)
				s.cancelBuild()
				s.each(syscall.SIGINT)
				deadline = time.After(stopWithin)
				continue
			}
			if first {
				close(s.interrupted)
				s.cancelBuild()
			}
			s.kill(signalName(sig))
		case <-deadline:
			s.kill(fmt.Sprintf("the families did not stop within %s", stopWithin))
		case <-s.finished:
			return
		}
	}
}

// kill SIGKILLs every running group, now and as they start.
func (s *stopper) kill(why string) {
	s.mu.Lock()
	already := s.killing
	s.killing = true
	s.mu.Unlock()
	if !already {
		fmt.Fprintf(s.errw, "logjam: %s: killing the families\n", why)
	}
	s.each(syscall.SIGKILL)
}

func (s *stopper) each(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cmd, passOn := range s.running {
		if passOn || sig == syscall.SIGKILL {
			_ = syscall.Kill(-cmd.Process.Pid, sig)
		}
	}
}

// add records a started spec process that leads its own process group;
// one that starts after the interrupt gets the signal at once.
func (s *stopper) add(cmd *exec.Cmd) { s.record(cmd, true) }

// addListing records a dry run that lists an interrupted run's cells: it
// is killed by a second signal, never interrupted by the first.
func (s *stopper) addListing(cmd *exec.Cmd) { s.record(cmd, false) }

func (s *stopper) record(cmd *exec.Cmd, passOn bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running[cmd] = passOn
	switch {
	case s.killing:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	case s.first != nil && passOn:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	}
}

// done forgets a command that has exited and kills what is left of its
// group.
func (s *stopper) done(cmd *exec.Cmd) {
	s.mu.Lock()
	delete(s.running, cmd)
	s.mu.Unlock()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Interrupted is closed at the first signal.
func (s *stopper) Interrupted() <-chan struct{} { return s.interrupted }

// Signal is the first signal received, nil if none.
func (s *stopper) Signal() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

// close stops listening (a later Ctrl-C ends logjam as usual) and kills and
// reaps the processes the run left that logjam adopted. Call it once the
// families and the build are done; calls after the first do nothing.
func (s *stopper) close() {
	s.closeOnce.Do(func() {
		signal.Stop(s.signals)
		close(s.finished)
		<-s.loopDone
		if left := killLeftovers(); len(left) > 0 {
			fmt.Fprintf(s.errw, "logjam: killed what the families left running: %s\n", strings.Join(left, ", "))
		}
	})
}

// exitStatusFor is the shell's status for a run ended by sig: 128+signo.
func exitStatusFor(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	case syscall.SIGQUIT:
		return "quit (SIGQUIT)"
	}
	return s.String()
}
