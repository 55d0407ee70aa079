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

// hangWatch ends a real run that outlives its row's deadline, counted from
// the child's "start" event, after reading every thread's wait state from
// outside the child: /proc/PID/task/TID/{comm,stat,wchan,syscall}. That
// reading is the HANG's evidence; the child declares nothing.
type hangWatch struct {
	cmd   *exec.Cmd
	after time.Duration

	mu    sync.Mutex
	timer *time.Timer
	seen  string
	done  bool
}

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
}

// stop ends the watch; after it, observed is final.
func (h *hangWatch) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
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
