package schedule

import "fmt"

// Call is one binding call: holding its backend's lock, the delegate logs
// Lines lines of Size message bytes.
type Call struct {
	// Backend: 0 or 1; threads that share a backend share its lock.
	Backend int    `json:"backend"`
	Lines   int    `json:"lines"`
	Size    int    `json:"size"`
	Level   string `json:"level"` // I or E
	// Invalid: an invalid UTF-8 byte (0xff) at this byte of each message
	// (0: none; 1-based).
	Invalid int `json:"invalid,omitempty"`
	// CJK: the message is three-byte characters after a one-byte prefix
	// (so the logger's 255-byte cut and the 1024-byte cut of appended
	// Error lines can fall inside a character).
	CJK bool `json:"cjk,omitempty"`
	// WaitFor is a seeded switch point: holding the backend lock, before
	// logging, the thread waits until thread WaitFor-1 waits for something
	// or has ended (0: none).
	WaitFor int `json:"wait_for,omitempty"`
	// Yield: after the call the eval loop hands the GIL over.
	Yield bool `json:"yield,omitempty"`
	// Fails: the call raises RuntimeError with a native message of
	// FailChars three-byte characters (the 127-byte cut falls inside one
	// or not) after its Error lines (appended up to 1024 bytes).
	Fails     bool `json:"fails,omitempty"`
	FailChars int  `json:"fail_chars,omitempty"`
	// Nested: before the call returns, with its backend lock let go, its
	// native code calls back into Python (GIL held), and the callback
	// makes this binding call: nested inside the first, one level deep. A
	// nested call's own error is caught by the callback.
	Nested *Call `json:"nested,omitempty"`
	PoolWork
}

func (c Call) validate(threads int) error {
	switch {
	case c.Backend < 0 || c.Backend > 1:
		return fmt.Errorf("backend %d (accepted: 0, 1)", c.Backend)
	case c.Lines < 0 || c.Lines > 1024:
		return fmt.Errorf("lines %d (accepted: 0 to 1024)", c.Lines)
	case c.Size < 1 || c.Size > 2048:
		return fmt.Errorf("size %d (accepted: 1 to 2048)", c.Size)
	case c.Level != "I" && c.Level != "E":
		return fmt.Errorf("level %q (accepted: I, E)", c.Level)
	case c.Invalid < 0 || c.Invalid > c.Size:
		return fmt.Errorf("invalid %d (accepted: 0 to size)", c.Invalid)
	case c.WaitFor < 0 || c.WaitFor > threads:
		return fmt.Errorf("wait_for %d (accepted: 0 to %d)", c.WaitFor, threads)
	case c.FailChars < 0 || c.FailChars > 64:
		return fmt.Errorf("fail_chars %d (accepted: 0 to 64)", c.FailChars)
	case c.Nested != nil && c.Nested.Nested != nil:
		return fmt.Errorf("a nested call nests another (accepted: one level)")
	}
	if c.Nested != nil {
		if err := c.Nested.validate(threads); err != nil {
			return fmt.Errorf("nested: %w", err)
		}
	}
	return nil
}

// faults counts a call's faults: the call, its invalid byte, switch point
// and failure, and its nested call's.
func (c Call) faults() int {
	n := 1 + b2i(c.Invalid > 0) + b2i(c.WaitFor > 0) + b2i(c.Fails)
	if c.Nested != nil {
		n += c.Nested.faults()
	}
	return n
}

// Message sizes around the cuts: the exception's 127 bytes, the logger's
// 255, the appended errors' 1024.
var sizeBases = []int{80, 127, 255, 1024}

// drawCall draws a call of thread self of threads; with nest, maybe a
// call nested in it (a callback into Python that makes a binding call).
func drawCall(d Drawer, sw swarm, threads, self int, nest bool) Call {
	c := Call{
		Backend: d.IntRange(0, 1, "backend"),
		Lines:   d.IntRange(0, 160, "lines"),
		Level:   pick(d, []string{"I", "E"}, "level"),
	}
	c.Size = max(1, pick(d, sizeBases, "size base")+d.IntRange(-3, 3, "size delta"))
	c.CJK = sw.cjk && d.IntRange(0, 3, "cjk?") == 0
	if sw.invalid && d.IntRange(0, 5, "invalid?") == 0 {
		c.Invalid = d.IntRange(1, c.Size, "invalid at")
	}
	if threads > 1 && sw.switchPoints && d.IntRange(0, 1, "switch point?") == 0 {
		other := d.IntRange(0, threads-2, "wait for")
		if other >= self {
			other++
		}
		c.WaitFor = other + 1
	}
	c.Yield = sw.yields && d.Bool("yield")
	if sw.fails && d.IntRange(0, 5, "fails?") == 0 {
		c.Fails = true
		c.FailChars = d.IntRange(30, 45, "fail chars")
	}
	if nest && sw.nested && d.IntRange(0, 5, "nested?") == 0 {
		n := drawCall(d, sw, threads, self, false)
		c.Nested = &n
	}
	return c
}
