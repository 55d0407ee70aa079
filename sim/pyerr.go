package sim

// PyErr is a Python exception.
type PyErr struct {
	Type string // RuntimeError, IndexError, KeyboardInterrupt, OSError, UnicodeDecodeError
	Msg  string
}

func (e *PyErr) Error() string { return e.Type + ": " + e.Msg }

// Traceback is what Python prints for an exception that escapes.
func (e *PyErr) Traceback() string {
	return "Traceback (most recent call last):\n  File \"<scenario>\", line 1, in <module>\n" + e.Type + ": " + e.Msg
}

// IsKeyboardInterrupt reports whether e is a KeyboardInterrupt.
func (e *PyErr) IsKeyboardInterrupt() bool { return e != nil && e.Type == "KeyboardInterrupt" }
