package watchdog

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"logjam/verdict"
)

// fakeCPUWait makes the child look starved: each look finds step more
// time spent waiting for a CPU, for looks looks (the watchdog's first look
// at a child is at its deadline: its baseline is none). The parent (this
// process) waits for none.
func fakeCPUWait(t *testing.T, step time.Duration, looks int) {
	t.Helper()
	fakeStarved(t, step, looks, func(pid int) bool { return pid != os.Getpid() })
}

// fakeStarved is fakeCPUWait for the processes whose pid starved says.
func fakeStarved(t *testing.T, step time.Duration, looks int, starved func(pid int) bool) {
	t.Helper()
	var mu sync.Mutex
	var d time.Duration
	n, added := 0, 0
	old := cpuWaitOf
	cpuWaitOf = func(pid int) (time.Duration, bool) {
		mu.Lock()
		defer mu.Unlock()
		if !starved(pid) {
			return 0, true
		}
		// The parent's first look is its baseline; a child has none.
		if (n > 0 || pid != os.Getpid()) && added < looks {
			d += step
			added++
		}
		n++
		return d, true
	}
	oldBaseline := parentBaseline
	parentBaseline = func() (time.Duration, bool) { return cpuWaitOf(os.Getpid()) }
	t.Cleanup(func() { cpuWaitOf, parentBaseline = old, oldBaseline })
}

// A child held up by a starved parent (it waits, asleep, for an answer the
// parent is slow to give) is not a HANG either: the parent's wait for a
// CPU is added as the child's is.
func TestChildOfAStarvedParentGetsTheTimeTheParentWaited(t *testing.T) {
	fakeStarved(t, 600*time.Millisecond, 3, func(pid int) bool { return pid == os.Getpid() })
	cfg := Config{Deadline: time.Second, Mode: Strict}
	res, _ := run(t, childCmd(t, "slow"), cfg)
	wantVerdict(t, res, verdict.Completed)
}

// A child that would finish in time had it got a CPU is not a HANG: the
// time it waited for one is added to its deadline.
func TestStarvedChildGetsTheTimeItWaitedForACPU(t *testing.T) {
	fakeCPUWait(t, 600*time.Millisecond, 3)
	cfg := Config{Deadline: time.Second, Mode: Strict}
	res, _ := run(t, childCmd(t, "slow"), cfg)
	wantVerdict(t, res, verdict.Completed)
}

// A child that is stuck gets at most MaxStarvedShare deadlines more, however
// starved it looks: no hang can hang the watchdog.
func TestStarvedStuckChildIsAHangWithinBound(t *testing.T) {
	fakeCPUWait(t, time.Hour, 1000)
	const deadline = 300 * time.Millisecond
	cfg := Config{Deadline: deadline, Mode: Strict, GraceFloor: 200 * time.Millisecond}
	res, elapsed := run(t, childCmd(t, "stubborn"), cfg)
	wantVerdict(t, res, verdict.Hang)
	if !strings.Contains(res.Reason, "the time it and the watchdog waited for a CPU") {
		t.Errorf("reason %q does not say the deadline moved", res.Reason)
	}
	if max := deadline*(1+MaxStarvedShare) + cfg.Grace() + slack; elapsed > max {
		t.Errorf("returned after %s, more than %s", elapsed, max)
	}
	assertGone(t, res.Pid)
}

// A child that waited for no CPU ends at its deadline, as before.
func TestUnstarvedSlowChildIsAHangAtItsDeadline(t *testing.T) {
	fakeCPUWait(t, 0, 0)
	cfg := Config{Deadline: 300 * time.Millisecond, Mode: Strict}
	res, _ := run(t, childCmd(t, "slow"), cfg)
	wantVerdict(t, res, verdict.Hang)
	if strings.Contains(res.Reason, "CPU") {
		t.Errorf("reason %q: no time was added", res.Reason)
	}
}

func TestCPUWaitReadsTheKernel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux says how long a process waited for a CPU")
	}
	if _, ok := cpuWait(1 << 30); ok {
		t.Error("a process that does not exist has a CPU wait")
	}
	if _, ok := cpuWait(syscallGetpid()); !ok {
		t.Error("no CPU wait for this process (is /proc/PID/task/*/schedstat there?)")
	}
}

func syscallGetpid() int { return os.Getpid() }
