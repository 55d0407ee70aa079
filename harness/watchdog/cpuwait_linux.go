package watchdog

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuWait is how long the live threads of process pid have waited, runnable,
// for a CPU (the run-queue delay of /proc/PID/task/*/schedstat, summed); ok is
// false when the kernel does not say (no schedstat, the process is gone).
// The threads are listed with one read of /proc/PID/task: filepath.Glob
// also listed each thread's directory to match "schedstat", and watch asks
// at every child's start for the parent's own (a twentieth of random
// search's own CPU); a child's is read only at its deadline.
func cpuWait(pid int) (d time.Duration, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tids, err := readNames(dir)
	if err != nil || len(tids) == 0 {
		return 0, false
	}
	for _, tid := range tids {
		b, err := os.ReadFile(dir + tid + "/schedstat")
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

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
