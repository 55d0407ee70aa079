//go:build unix && !linux

package watchdog

import "syscall"

// setDeathSignal does nothing: macOS has no Pdeathsig. A test process killed
// outright (SIGKILL) leaves its child running there; an interrupt handler
// that calls KillAll covers the catchable cases.
func setDeathSignal(attr *syscall.SysProcAttr) {}
