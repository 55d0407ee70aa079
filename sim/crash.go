package sim

import (
	"sync"
	"sync/atomic"
)

// A runtime's crash handler (docs/SCENARIOS.md, row F10): glog's and
// absl's failure signal handlers log their Fatal context from the signal
// handler, on whatever the interrupted thread was doing, and abort. The
// model runs it on the thread at one chosen point of the handling of one
// line: where the sink keeps the line, its own lock held (a policy calls
// CrashPoint there), or once the sink is done with the line (Log calls it
// after Emit) for a sink that keeps nothing there. The real column raises
// the signal at the same two points.
type crash struct {
	armed   atomic.Bool // set once by ArmCrash: every line of every run asks, and an unarmed run takes no lock
	mu      sync.Mutex
	t       *Thread
	name    string // or the thread of this name (ArmCrashOn), made later
	line    int    // the t's line, counted from the arming, whose handling the signal interrupts
	seen    int
	fired   bool
	handler func(t *Thread)
}

// ArmCrash makes the line-th line t logs from now on (1 for the next) be
// interrupted by the crash handler handler (it logs its Fatal line and
// the process aborts).
func (rt *Runtime) ArmCrash(t *Thread, line int, handler func(t *Thread)) {
	rt.crash.arm(t, "", line, handler)
}

// ArmCrashOn is ArmCrash for the thread named name, which may not be made
// yet (a native worker of a call's pool): the line-th line it logs.
func (rt *Runtime) ArmCrashOn(name string, line int, handler func(t *Thread)) {
	rt.crash.arm(nil, name, line, handler)
}

// arm arms the crash for t, or for the thread named name when t is nil.
func (c *crash) arm(t *Thread, name string, line int, handler func(t *Thread)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t, c.name, c.line, c.seen, c.fired, c.handler = t, name, line, 0, false, handler
	c.armed.Store(true)
}

// on: t is the thread the crash is armed for.
func (c *crash) on(t *Thread) bool { return c.t == t || c.t == nil && c.name == t.Name }

// logged counts a line of t toward the armed crash.
func (c *crash) logged(t *Thread) {
	if !c.armed.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on(t) && !c.fired {
		c.seen++
	}
}

// CrashPoint runs the armed crash handler on t if t is handling the line
// it interrupts: a policy calls it where it keeps a line, its own lock
// held; Log calls it once the policy is done with the line.
func (rt *Runtime) CrashPoint(t *Thread) {
	c := &rt.crash
	if !c.armed.Load() {
		return
	}
	c.mu.Lock()
	fire := c.on(t) && !c.fired && c.seen == c.line
	if fire {
		c.fired = true
	}
	h := c.handler
	c.mu.Unlock()
	if fire {
		h(t)
	}
}
