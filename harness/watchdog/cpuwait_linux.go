package watchdog

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuWait is how long the live threads of process pid have waited, runnable,
// for a CPU (the run-queue delay of /proc/PID/task/*/schedstat, summed); ok is
// false when the kernel does not say (no schedstat, the process is gone).
func cpuWait(pid int) (d time.Duration, ok bool) {
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		fields := strings.Fields(string(b))
		if len(fields) < 2 {
			return 0, false
		}
		ns, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return 0, false
		}
		d += time.Duration(ns)
		ok = true
	}
	return d, ok
}
