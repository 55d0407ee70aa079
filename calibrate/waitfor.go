package calibrate

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A real child's wait-for state, read from outside as the extension's
// barrier reads it from inside (ext/barrier.hpp, waits_for): each thread's
// state and system call from /proc/PID/task/TID/{stat,syscall,comm}, and
// the pipes it waits on from /proc/PID/fd. A thread is stuck when it
// sleeps in a wait only the process can end:
//   - futex FUTEX_WAIT_BITSET with a timeout: CPython's take_gil (its
//     COND_TIMED_WAIT, woken every 5 ms to ask for the GIL, and asleep again);
//   - an untimed futex wait: a lock, a semaphore, a condition, a join;
//   - write(2) on a pipe whose read end this process holds (a forwarder's),
//     or read(2) on a pipe whose write end it holds.
//
// A sleep, a poll (a bounded room check), a wait for a child process, a
// write to a pipe the parent drains: these end without the process, and a
// thread in one is not stuck.
type threadWait struct {
	tid, name string
	asleep    bool // state S or D
	stuck     bool
	what      string // what it waits for, in words
	key       string // the wait's identity (system call and address): a stuck state that changes is no hang
}

// waitState reads every thread of pid; ok is false when pid has no
// readable thread (it ended).
func waitState(pid int) (ws []threadWait, ok bool) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := os.ReadDir(dir)
	if err != nil || len(tids) == 0 {
		return nil, false
	}
	// The pipes are read only when a thread sleeps in read(2) or write(2),
	// once per reading.
	var ends map[string]pipeEnd
	pipes := func() map[string]pipeEnd {
		if ends == nil {
			ends = pipeEnds(pid)
		}
		return ends
	}
	for _, t := range tids {
		base := filepath.Join(dir, t.Name())
		w := threadWait{tid: t.Name(), name: strings.TrimSpace(readProc(base, "comm"))}
		st := readProc(base, "stat")
		i := strings.LastIndexByte(st, ')')
		if st == "" || i < 0 || i+2 >= len(st) {
			continue // ended meanwhile
		}
		state := st[i+2 : i+3]
		sc := strings.Fields(readProc(base, "syscall"))
		w.key = strings.Join(sc, " ")
		w.asleep = state == "S" || state == "D"
		if w.asleep && len(sc) >= 5 {
			w.what, w.stuck = classify(pid, sc, pipes)
		}
		ws = append(ws, w)
	}
	sort.Slice(ws, func(a, b int) bool { return ws[a].tid < ws[b].tid })
	return ws, len(ws) > 0
}

// classify names what a sleeping thread's system call waits for (x86-64
// numbers), and whether only the process can end it.
func classify(pid int, sc []string, pipes func() map[string]pipeEnd) (string, bool) {
	arg := func(i int) uint64 { v, _ := strconv.ParseUint(strings.TrimPrefix(sc[i], "0x"), 16, 64); return v }
	switch sc[0] {
	case "202": // futex(uaddr, op, val, timeout)
		op := arg(2) & 0x7f
		switch {
		case op == 9 && arg(4) != 0:
			// take_gil's wait is re-armed every switch interval (5 ms): a
			// timed wait with little left is the GIL; one with more left is
			// a bounded wait that ends by itself (a lock's acquire(timeout),
			// logjam.hpp's try_lock_for), as is one whose deadline cannot be
			// read.
			if left, ok := futexLeft(pid, arg(4), arg(2)&256 != 0); ok && left <= gilWaitLeft {
				return "the GIL", true
			}
			return "", false
		case op == 0 || op == 9:
			return fmt.Sprintf("a lock or a condition (futex %s)", sc[1]), true
		}
	case "1": // write(fd, ...)
		if e, ok := pipes()[strconv.FormatUint(arg(1), 10)]; ok && e.readerHere {
			return fmt.Sprintf("room on a pipe this process drains (write(2) on fd %d)", arg(1)), true
		}
	case "0": // read(fd, ...)
		if e, ok := pipes()[strconv.FormatUint(arg(1), 10)]; ok && e.writerHere {
			return fmt.Sprintf("bytes on a pipe only this process writes (read(2) on fd %d)", arg(1)), true
		}
	}
	return "", false
}

// pipeEnd is one descriptor of the child on a pipe, and whether the child
// also holds the pipe's other end.
type pipeEnd struct{ readerHere, writerHere bool }

// pipeEnds maps each of pid's descriptors that is a pipe to whether pid
// holds that pipe's read end and its write end.
func pipeEnds(pid int) map[string]pipeEnd {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, _ := os.ReadDir(dir)
	type ends struct{ r, w bool }
	byPipe := map[string]*ends{}
	fdPipe := map[string]string{}
	for _, f := range fds {
		link, err := os.Readlink(filepath.Join(dir, f.Name()))
		if err != nil || !strings.HasPrefix(link, "pipe:") {
			continue
		}
		fdPipe[f.Name()] = link
		e := byPipe[link]
		if e == nil {
			e = &ends{}
			byPipe[link] = e
		}
		if accMode(pid, f.Name()) == 0 {
			e.r = true
		} else {
			e.w = true
		}
	}
	out := map[string]pipeEnd{}
	for fd, p := range fdPipe {
		out[fd] = pipeEnd{readerHere: byPipe[p].r, writerHere: byPipe[p].w}
	}
	return out
}

// accMode is O_ACCMODE of pid's fd, from /proc/PID/fdinfo (flags, octal).
func accMode(pid int, fd string) uint64 {
	for _, l := range strings.Split(readProc(fmt.Sprintf("/proc/%d/fdinfo", pid), fd), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			f, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return f & 3
		}
	}
	return 1
}

// stuckCycle is the named wait-for state when every thread of ws is stuck
// ("": some thread can still move). The GIL's holder is named when every
// thread but one waits for it.
func stuckCycle(ws []threadWait) string {
	gilWaiters, parts := 0, make([]string, 0, len(ws))
	for _, w := range ws {
		if !w.stuck {
			return ""
		}
		if w.what == "the GIL" {
			gilWaiters++
		}
	}
	for _, w := range ws {
		s := fmt.Sprintf("%s[%s] waits for %s", w.name, w.tid, w.what)
		if w.what != "the GIL" && gilWaiters > 0 && gilWaiters == len(ws)-1 {
			s += ", holding the GIL"
		}
		parts = append(parts, s)
	}
	return "every thread waits for what only the process can give: " + strings.Join(parts, "; ")
}

// stateKey is ws's identity: the same threads in the same waits.
func stateKey(ws []threadWait) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.tid + ":" + w.key + "|")
	}
	return b.String()
}

// gilWaitLeft is the most a GIL waiter's timed wait has left: CPython's
// switch interval (5 ms by default) with room for a late reading.
const gilWaitLeft = 20 * time.Millisecond

// futexLeft is how long the timed futex wait of pid whose absolute deadline
// (a struct timespec) is at addr has left, on CLOCK_REALTIME when realtime
// (FUTEX_CLOCK_REALTIME), else CLOCK_MONOTONIC; ok is false when pid's
// memory cannot be read (/proc/PID/mem needs ptrace access to the child).
func futexLeft(pid int, addr uint64, realtime bool) (time.Duration, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var b [16]byte
	if n, err := f.ReadAt(b[:], int64(addr)); err != nil || n != len(b) {
		return 0, false
	}
	deadline := time.Duration(int64(binary.LittleEndian.Uint64(b[:8])))*time.Second + time.Duration(int64(binary.LittleEndian.Uint64(b[8:])))
	clock := unix.CLOCK_MONOTONIC
	if realtime {
		clock = unix.CLOCK_REALTIME
	}
	var now unix.Timespec
	if unix.ClockGettime(int32(clock), &now) != nil {
		return 0, false
	}
	return deadline - time.Duration(now.Nano()), true
}
