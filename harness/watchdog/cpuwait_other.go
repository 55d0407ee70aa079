//go:build !linux

package watchdog

import "time"

// cpuWait: only Linux says how long a process waited for a CPU; elsewhere
// the deadline is wall-clock time.
func cpuWait(int) (time.Duration, bool) { return 0, false }
