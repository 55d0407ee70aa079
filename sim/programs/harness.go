package programs

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"logjam/failpoints"
	"logjam/signals"
	"logjam/sim"
)

// The watchdog's purpose-built children (suites/harness).
func init() {
	play(&Program{ID: "H0", Raw: func() int {
		v, ok := failpoints.Int(failpoints.Probe)
		fmt.Printf("probe %d %v\ndone\n", v, ok)
		return 0
	}})
	play(&Program{ID: "H1", Run: twoLockDeadlock})
	play(&Program{ID: "H2", Raw: func() int { fmt.Println("working"); return 0 }})
	play(&Program{ID: "H3", Raw: func() int {
		fmt.Println("about to fail")
		fmt.Fprintln(os.Stderr, "H3: failing on purpose")
		return 3
	}})
	play(&Program{ID: "H4", Raw: func() int { signals.DieBy(syscall.SIGSEGV); return 0 }})
	play(&Program{ID: "H5", Raw: func() int { fmt.Println("H5 started: its failpoints were not refused"); return 0 }})
	play(&Program{ID: "H6", Raw: grandchildHoldsStdout})
}

func twoLockDeadlock(e *Env) *sim.PyErr {
	in := e.RT.In
	first, second := in.G.NewLock("lock X"), in.G.NewLock("lock Y")
	grab := func(mine, theirs *sim.Lock) func(t *sim.Thread) *sim.PyErr {
		return func(t *sim.Thread) *sim.PyErr {
			t.ReleaseGIL() // native code that dropped the GIL
			mine.Acquire(t)
			// Barrier, not a sleep: go on once both threads hold their first lock.
			in.G.WaitUntil(func() bool { return theirs.OwnerLocked() != nil })
			theirs.Acquire(t)
			t.AcquireGIL()
			return nil
		}
	}
	a := in.Start("A", false, grab(first, second))
	b := in.Start("B", false, grab(second, first))
	e.Main.Join(a)
	e.Main.Join(b)
	return nil
}

// grandchildHoldsStdout starts `sleep` with our stdout, so the parent's
// stdout pipe stays open after we are gone, then hangs.
func grandchildHoldsStdout() int {
	cmd := exec.Command("sleep", "600")
	cmd.Stdout = os.Stdout
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "H6:", err)
		return 1
	}
	fmt.Printf("grandchild %d\n", cmd.Process.Pid)
	for {
		time.Sleep(time.Hour)
	}
}
