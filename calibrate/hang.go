package calibrate

import (
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"logjam/internal/proc"
	"logjam/telemetry"
)

// startAllowance is how long an interpreter may take to reach its "start"
// event before the row's deadline begins (before the timeout scale).
const startAllowance = 20 * time.Second

// hangSettle is the least time between the two readings that prove a hang
// (before the timeout scale). The proof does not need it (waitfor.go,
// Proves: the sleepers' switch counts say they never woke between the
// readings, whatever the gap); it spaces the readings beyond the GIL's
// 5 ms switch interval, so each GIL waiter has asked again in between.
const hangSettle = 50 * time.Millisecond

// hangPoll is how often the watch reads the wait state while nothing is
// stuck; hangPollStuck, while a stuck reading waits for its proof.
const (
	hangPoll      = 25 * time.Millisecond
	hangPollStuck = 10 * time.Millisecond
)

// hangWatch ends a real run that hangs, reading every thread's wait-for
// state from outside the child (waitfor.go; /proc/PID/task/TID and what
// the extension announced): as soon as two readings prove that nothing in
// the process can move again (a real hang confirmed, its cycle named from
// the later reading), or when the run outlives its row's deadline, counted
// from the child's "start" event (a block that cannot be read as one: the
// raw state kept). That reading is the HANG's evidence; the child declares
// nothing.
type hangWatch struct {
	cmd    *exec.Cmd
	after  time.Duration
	settle time.Duration // 0: at the deadline only
	// waiting, if set, is called once, when the child has used less than
	// a quarter of a core over the last computeWindow: its computing is
	// over for now (its CPU slot goes to another child).
	waiting func()

	handled atomic.Int64 // telemetry lines the parent has handled (OnEvent returned)
	known   atomic.Pointer[Known]

	mu    sync.Mutex
	timer *time.Timer
	seen  string
	cycle string // the named cycle of a confirmed hang
	done  bool
	quit  chan struct{}
}

// event counts a telemetry event the parent has handled, and keeps the
// extension's announcement (KindWaitFor). Call it once the event's actions
// (a SIGINT asked by a mark, say) are done.
func (h *hangWatch) event(ev telemetry.Event) {
	if k, ok := KnownFrom(ev); ok {
		h.known.Store(&k)
	}
	h.handled.Add(1)
}

// confirmed reports whether the watch ended the run on a proven hang
// (before the deadline), with its named cycle.
func (h *hangWatch) confirmed() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cycle, h.cycle != ""
}

func (h *hangWatch) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil || h.done || h.cmd.Process == nil {
		return
	}
	pid := h.cmd.Process.Pid
	h.timer = time.AfterFunc(h.after, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.done || h.seen != "" {
			return
		}
		h.seen = "observed from outside: " + h.raw(pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
	h.quit = make(chan struct{})
	go h.watch(pid, h.quit)
}

// raw is the wait state at the deadline, every thread as it is.
func (h *hangWatch) raw(pid int) string {
	wf, ok := ReadWaitFor(pid, h.known.Load())
	if !ok {
		return "no thread readable"
	}
	return wf.String()
}

// watch reads the wait state until the run ends, and ends the run once a
// stuck reading is proven by a later one (WaitFor.Proves).
func (h *hangWatch) watch(pid int, quit chan struct{}) {
	var anchor WaitFor
	var since, cpuSince time.Time
	var cpuAt uint64
	poll := hangPoll
	for {
		select {
		case <-quit:
			return
		case <-time.After(poll):
		}
		// The lines the parent has handled, loaded before the reading: a
		// line the child wrote by the reading's end must have had its
		// answer (a SIGINT sent) before the reading began.
		handled := h.handled.Load()
		if h.waiting != nil {
			if ticks, ok := cpuTicks(pid); !ok || cpuSince.IsZero() {
				cpuSince, cpuAt = time.Now(), ticks
			} else if d := time.Since(cpuSince); d >= computeWindow {
				if time.Duration(ticks-cpuAt)*tick < d/4 {
					h.waiting()
					h.waiting = nil
				}
				cpuSince, cpuAt = time.Now(), ticks
			}
		}
		if h.settle <= 0 {
			continue // the deadline alone ends it: nothing to read
		}
		wf, ok := ReadWaitFor(pid, h.known.Load())
		if !ok {
			continue
		}
		switch {
		case since.IsZero() || (!wf.stuck() && !wf.gilWaiterAwake(anchor)):
			anchor, since, poll = wf, time.Time{}, hangPoll
			if wf.stuck() {
				since, poll = time.Now(), hangPollStuck
			}
			continue
		case !wf.stuck():
			continue // a GIL waiter caught asking again: neither proof nor change
		case time.Since(since) < h.settle:
			continue
		case !wf.Proves(anchor, handled):
			anchor, since = wf, time.Now()
			continue
		}
		h.mu.Lock()
		if !h.done && h.seen == "" {
			h.cycle = wf.Cycle()
			h.seen = "observed from outside, proven by two readings " + time.Since(since).Round(time.Millisecond).String() + " apart: " + h.cycle
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		h.mu.Unlock()
		return
	}
}

// computeWindow is how long a child's CPU use is measured before its CPU
// slot is given back; tick is /proc's clock tick (USER_HZ, 100 on Linux).
const (
	computeWindow = 100 * time.Millisecond
	tick          = 10 * time.Millisecond
)

// cpuTicks is the CPU time pid has used (utime + stime, in ticks).
func cpuTicks(pid int) (uint64, bool) {
	p, err := proc.Read(pid)
	return p.CPUTicks, err == nil
}

// stop ends the watch; after it, observed is final.
func (h *hangWatch) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.done && h.quit != nil {
		close(h.quit)
	}
	h.done = true
	if h.timer != nil {
		h.timer.Stop()
	}
}

func (h *hangWatch) observed() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen
}
