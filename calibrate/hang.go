package calibrate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// startAllowance is how long an interpreter may take to reach its "start"
// event before the row's deadline begins (before the timeout scale).
const startAllowance = 20 * time.Second

// hangConfirm is how long every thread of a real run must wait for what
// only the process can give, in the same waits, before the run is a HANG
// (before the timeout scale).
const hangConfirm = 500 * time.Millisecond

// hangWatch ends a real run that hangs, reading every thread's wait state
// from outside the child (waitfor.go; /proc/PID/task/TID): as soon as every
// thread has waited for what only the process can give, in the same waits,
// for confirm (a real hang confirmed; the state named), or when the run
// outlives its row's deadline, counted from the child's "start" event (a
// block that cannot be read as one: the raw state, WaitState). That
// reading is the HANG's evidence; the child declares nothing.
type hangWatch struct {
	cmd     *exec.Cmd
	after   time.Duration
	confirm time.Duration // 0: at the deadline only
	// waiting, if set, is called once, at the first reading that finds
	// every thread asleep: the child's computing is over for now.
	waiting func()

	mu    sync.Mutex
	timer *time.Timer
	seen  string
	early bool // seen is a confirmed wait-for state, not the deadline's reading
	done  bool
	quit  chan struct{}
}

// confirmed reports whether the watch ended the run on a confirmed hang
// (before the deadline).
func (h *hangWatch) confirmed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.early
}

// hangPoll is how often the watch reads the wait state; hangMisses, how
// many readings in a row may differ from a stuck state without ending it.
const (
	hangPoll   = 25 * time.Millisecond
	hangMisses = 2
)

func (h *hangWatch) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil || h.done || h.cmd.Process == nil {
		return
	}
	pid := h.cmd.Process.Pid
	h.timer = time.AfterFunc(h.after, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.done {
			return
		}
		h.seen = "observed from outside: " + WaitState(pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
	if h.confirm > 0 {
		h.quit = make(chan struct{})
		go h.watch(pid, h.quit)
	}
}

// watch polls the wait state until the run ends, and ends the run once
// every thread has been stuck in the same waits for confirm.
func (h *hangWatch) watch(pid int, quit chan struct{}) {
	tick := time.NewTicker(hangPoll)
	defer tick.Stop()
	var since time.Time
	key := ""
	misses := 0
	for {
		select {
		case <-quit:
			return
		case <-tick.C:
		}
		ws, ok := waitState(pid)
		if ok && h.waiting != nil && allAsleep(ws) {
			h.waiting()
			h.waiting = nil
		}
		cycle := ""
		if ok {
			cycle = stuckCycle(ws)
		}
		if cycle == "" || stateKey(ws) != key {
			// A GIL waiter wakes every 5 ms and may be caught awake (on a
			// loaded machine, waiting for a CPU): up to hangMisses readings in
			// a row that differ leave the state as it was.
			if misses++; key != "" && misses <= hangMisses {
				continue
			}
			key, since, misses = "", time.Time{}, 0
			if cycle != "" {
				key, since = stateKey(ws), time.Now()
			}
			continue
		}
		misses = 0
		if time.Since(since) < h.confirm {
			continue
		}
		h.mu.Lock()
		if !h.done && h.seen == "" {
			h.seen, h.early = fmt.Sprintf("observed from outside, the same for %s: %s", h.confirm, cycle), true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		h.mu.Unlock()
		return
	}
}

func allAsleep(ws []threadWait) bool {
	for _, w := range ws {
		if !w.asleep {
			return false
		}
	}
	return true
}

// stop ends the watch; after it, observed is final.
func (h *hangWatch) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.done && h.quit != nil {
		close(h.quit)
	}
	h.done = true
	if h.timer != nil {
		h.timer.Stop()
	}
}

func (h *hangWatch) observed() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen
}

// WaitState describes what each thread of process pid is doing, read from
// /proc: its name (comm: the extension names its threads as Python does),
// its state, the kernel function it sleeps in (wchan) and its system call
// with the first argument (a futex's address tells which threads wait on
// the same lock). Sampled twice 50 ms apart: a thread whose context-switch
// count moved is "running", not asleep.
func WaitState(pid int) string {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	type sample struct{ name, state, wchan, sc, switches string }
	read := func() map[string]sample {
		out := map[string]sample{}
		tids, _ := os.ReadDir(dir)
		for _, t := range tids {
			base := filepath.Join(dir, t.Name())
			s := sample{name: strings.TrimSpace(readProc(base, "comm")), wchan: strings.TrimSpace(readProc(base, "wchan"))}
			if st := readProc(base, "stat"); st != "" {
				if i := strings.LastIndexByte(st, ')'); i >= 0 && i+2 < len(st) {
					s.state = st[i+2 : i+3]
				}
			}
			if f := strings.Fields(readProc(base, "syscall")); len(f) >= 2 {
				s.sc = syscallName(f[0]) + "(" + f[1] + ")"
			} else if len(f) == 1 {
				s.sc = f[0]
			}
			for _, l := range strings.Split(readProc(base, "status"), "\n") {
				if strings.HasPrefix(l, "voluntary_ctxt_switches:") || strings.HasPrefix(l, "nonvoluntary_ctxt_switches:") {
					s.switches += strings.TrimSpace(l[strings.IndexByte(l, ':')+1:]) + "/"
				}
			}
			out[t.Name()] = s
		}
		return out
	}
	first := read()
	time.Sleep(50 * time.Millisecond)
	second := read()
	if len(second) == 0 {
		return "no threads readable under " + dir
	}
	var parts []string
	asleep := 0
	for tid, s := range second {
		what := fmt.Sprintf("%s[%s] %s", s.name, tid, s.state)
		if f, ok := first[tid]; ok && f.switches == s.switches && s.state != "R" {
			asleep++
			what += " in " + s.wchan
			if s.sc != "" {
				what += " " + s.sc
			}
		} else {
			what += " running"
		}
		parts = append(parts, what)
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d of %d threads asleep for 50 ms: %s", asleep, len(second), strings.Join(parts, "; "))
}

func readProc(base, name string) string {
	b, _ := os.ReadFile(filepath.Join(base, name))
	return string(b)
}

// syscallName names the x86-64 system calls a blocked thread sits in.
func syscallName(nr string) string {
	switch nr {
	case "0":
		return "read"
	case "1":
		return "write"
	case "7":
		return "poll"
	case "202":
		return "futex"
	case "230":
		return "clock_nanosleep"
	case "271":
		return "ppoll"
	case "-1":
		return "running"
	}
	return "syscall " + nr
}
