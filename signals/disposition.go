package signals

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Disposition is what a signal does when a program starts: its default
// action, or nothing (ignored). A parent names one for each child, so a
// child never plays a different program because its caller (a shell, a test
// runner) ignored the signal.
type Disposition string

// The dispositions at start.
const (
	Default Disposition = "default"
	Ignored Disposition = "ignored"
)

// ParseDisposition accepts "default" and "ignored".
func ParseDisposition(s string) (Disposition, error) {
	switch d := Disposition(s); d {
	case Default, Ignored:
		return d, nil
	}
	return "", fmt.Errorf("unknown signal disposition %q (accepted: default, ignored)", s)
}

// StartWith makes this program run with sig in disposition d from its
// start. When the disposition it started with is d, it returns nil at once;
// otherwise it executes the program again with args, sig set so that the
// new image starts with d (exec keeps an ignored disposition and resets a
// caught one to the default), and returns only on failure.
func StartWith(sig syscall.Signal, d Disposition, args []string) error {
	ignored := signal.Ignored(sig)
	switch {
	case d == Ignored && ignored, d == Default && !ignored:
		return nil
	case d == Ignored:
		return ExecIgnoring(sig, args)
	case d == Default:
		// A Go handler, installed now, is SIG_DFL in the next image.
		signal.Notify(make(chan os.Signal, 1), sig)
		self, err := os.Executable()
		if err != nil {
			return err
		}
		return unix.Exec(self, append([]string{os.Args[0]}, args...), os.Environ())
	}
	return fmt.Errorf("unknown signal disposition %q (accepted: default, ignored)", d)
}
