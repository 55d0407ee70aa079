package calibrate

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runWatched starts python3 -c src under a hangWatch (deadline after, a
// confirmed hang after confirm) and returns how long it lived, what the
// watch saw and whether it confirmed a hang.
func runWatched(t *testing.T, src string, after, confirm time.Duration) (time.Duration, string, bool) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3: the watch is tried on a real interpreter")
	}
	cmd := exec.Command(py, "-c", src)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &hangWatch{cmd: cmd, after: after, confirm: confirm}
	start := time.Now()
	h.arm()
	_ = cmd.Wait()
	h.stop()
	return time.Since(start), h.observed(), h.confirmed()
}

// A real deadlock (the main thread waits for a lock it holds, nothing else
// can move) is confirmed from its wait state, long before the deadline,
// and named.
func TestARealDeadlockIsConfirmedFromItsWaitState(t *testing.T) {
	lived, seen, early := runWatched(t, "import threading\nl = threading.Lock()\nl.acquire()\nl.acquire()\n", 20*time.Second, 300*time.Millisecond)
	if !early {
		t.Fatalf("a deadlock lived %s and was not confirmed from its wait state before its deadline (seen: %q)", lived, seen)
	}
	if !strings.Contains(seen, "waits for a lock or a condition") {
		t.Fatalf("the confirmed state does not name the wait: %q", seen)
	}
}

// A thread that sleeps, or waits for a child process, can move without
// the process: its run is never ended as a hang before the deadline (here
// it ends by itself first).
func TestASleepOrAWaitForAChildIsNoHang(t *testing.T) {
	for name, src := range map[string]string{
		"a sleep":             "import time\ntime.sleep(1.5)\n",
		"a wait for a child":  "import subprocess\nsubprocess.run(['sleep', '1.5'])\n",
		"a thread in a sleep": "import threading, time\nt = threading.Thread(target=time.sleep, args=(1.5,))\nt.start()\nt.join()\n",
		"a bounded lock wait": "import threading\nl = threading.Lock()\nl.acquire()\nfor _ in range(15):\n    l.acquire(timeout=0.1)\n",
	} {
		lived, seen, early := runWatched(t, src, 20*time.Second, 300*time.Millisecond)
		if early || seen != "" {
			t.Errorf("%s: ended as a hang after %s: %q", name, lived, seen)
		}
	}
}

// A thread that waits for the GIL while its holder waits for a lock only
// the process can release (a C call that blocks without letting the GIL
// go) is stuck too: its timed wait is re-armed every switch interval.
func TestAGILWaiterBehindABlockedHolderIsConfirmed(t *testing.T) {
	src := "import threading, ctypes\n" +
		"def spin():\n    while True:\n        pass\nt = threading.Thread(target=spin, name='T', daemon=True)\nt.start()\n" +
		"sem = ctypes.create_string_buffer(64)\nlib = ctypes.PyDLL(None)\nlib.sem_init(sem, 0, 0)\nlib.sem_wait(sem)\n"
	lived, seen, early := runWatched(t, src, 20*time.Second, 300*time.Millisecond)
	if !early {
		t.Fatalf("a GIL waiter behind a blocked holder lived %s and was not confirmed before its deadline (seen: %q)", lived, seen)
	}
	if !strings.Contains(seen, "waits for the GIL") || !strings.Contains(seen, "holding the GIL") {
		t.Fatalf("the confirmed state does not name the GIL's waiter and holder: %q", seen)
	}
}
