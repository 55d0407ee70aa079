package calibrate

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"logjam/internal/proc"
	"logjam/telemetry"
)

// A real child's wait-for state, read from outside as the extension's
// barrier reads it from inside (ext/barrier.hpp, waits_for): each thread's
// state, system call and switch counts from /proc/PID/task/TID/{stat,
// syscall,status,comm}, the pipes it waits on from /proc/PID/fd, and what
// /proc cannot say from what the extension announced of itself (Known: the
// GIL's place, its locks, the telemetry lines written), read from
// /proc/PID/mem. One reading (ReadWaitFor) serves both ends: a hang is
// confirmed from two of them (Proves), and named from the later one
// (Cycle).
//
// A thread is stuck when it sleeps in a wait only the process can end:
//   - a futex wait on the GIL's condition (take_gil's timed wait, re-armed
//     every switch interval), while the GIL is held;
//   - an untimed futex wait: a lock, a semaphore, a condition, a join;
//   - write(2) on a pipe whose read end this process holds (a forwarder's),
//     or read(2) on a pipe whose write end it holds.
//
// A sleep, a poll (a bounded room check), a timed wait that is not the
// GIL's, a wait for a child process, a write to a pipe the parent drains:
// these end without the process, and a thread in one is not stuck. Without
// the extension's announcement the GIL's wait cannot be told from a
// bounded one, so a thread in a timed wait is not stuck then either: such
// a run is left to its deadline.

// Known is what a real child's extension announced about itself (the
// "waitfor" event, ext/waitfor.hpp). Its zero value knows nothing.
type Known struct {
	GILWords []uint64 // the futex words a GIL waiter sleeps on
	GIL      uint64   // CPython's _gil_runtime_state, 0 when not checked by the extension
	HolderAt uint64   // offset of last_holder (a PyThreadState *)
	LockedAt uint64   // offset of locked (an int)
	TIDAt    uint64   // offset of PyThreadState's native_thread_id; 0: unknown (3.10)
	LinesAt  uint64   // the count of telemetry lines written; 0: unknown
	Locks    map[uint64]string
}

// KindWaitFor is the extension's announcement of what Known holds.
const KindWaitFor = "waitfor"

// maxLocks bounds the locks an announcement may name.
const maxLocks = 16

var lockName = regexp.MustCompile(`^[A-Za-z0-9 '_.-]{1,64}$`)

// KnownFrom reads an announcement; ok is false for another event or one
// that does not parse (it is the child's: each address is checked to be
// one, each name to be short words, and the locks are bounded).
func KnownFrom(ev telemetry.Event) (Known, bool) {
	if ev.Ev != KindWaitFor {
		return Known{}, false
	}
	var a struct {
		GILWords []string `json:"gil_words"`
		GIL      string   `json:"gil"`
		HolderAt uint64   `json:"holder_at"`
		LockedAt uint64   `json:"locked_at"`
		TIDAt    uint64   `json:"tid_at"`
		LinesAt  string   `json:"lines_at"`
		Locks    []struct {
			Addr, Name string
		} `json:"locks"`
	}
	if ev.Decode(&a) != nil || len(a.GILWords) > 2 || len(a.Locks) > maxLocks || a.HolderAt > 64 || a.LockedAt > 64 || a.TIDAt > 4096 {
		return Known{}, false
	}
	addr := func(s string) (uint64, bool) {
		v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
		return v, err == nil && strings.HasPrefix(s, "0x")
	}
	var k Known
	var ok bool
	for _, w := range a.GILWords {
		v, good := addr(w)
		if !good || v == 0 {
			return Known{}, false
		}
		k.GILWords = append(k.GILWords, v)
	}
	if k.GIL, ok = addr(a.GIL); !ok {
		return Known{}, false
	}
	if k.LinesAt, ok = addr(a.LinesAt); !ok {
		return Known{}, false
	}
	k.HolderAt, k.LockedAt, k.TIDAt = a.HolderAt, a.LockedAt, a.TIDAt
	k.Locks = map[uint64]string{}
	for _, l := range a.Locks {
		v, good := addr(l.Addr)
		if !good || !lockName.MatchString(l.Name) {
			return Known{}, false
		}
		k.Locks[v] = l.Name
	}
	return k, true
}

// waitKind is what a sleeping thread's wait is, for the proof.
type waitKind int

const (
	waitNone   waitKind = iota // running, or a wait that ends by itself or from outside
	waitGIL                    // the GIL's condition
	waitStuck                  // a lock, a condition, a join, a pipe of this process
	waitUnread                 // a timed futex wait that may be the GIL's: nothing known to tell
)

// ThreadWait is one thread at one reading.
type ThreadWait struct {
	TID, Name string
	Asleep    bool   // state S or D
	Syscall   string // /proc's syscall line: the wait's identity (number, arguments, stack and pc)
	Switches  string // voluntary/involuntary context switches: unchanged, the thread has not run
	What      string // what it waits for, in words ("" when not stuck)
	Holder    string // the thread id holding what it waits for, when known
	kind      waitKind
}

// WaitFor is one reading of a real child's wait-for state.
type WaitFor struct {
	Threads []ThreadWait
	// The GIL, when the announcement allows reading it: Locked (-1 when
	// unread) and its holder's thread id ("" when unknown).
	GILLocked int
	GILHolder string
	// Lines is the count of telemetry lines the child has written (-1 when
	// unknown), read after every thread.
	Lines int64
}

// ReadWaitFor reads every thread of pid; ok is false when pid has no
// readable thread (it ended). k may be nil (nothing announced).
func ReadWaitFor(pid int, k *Known) (WaitFor, bool) {
	if k == nil {
		k = &Known{}
	}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := os.ReadDir(dir)
	if err != nil || len(tids) == 0 {
		return WaitFor{}, false
	}
	mem := procMem(pid)
	defer mem.close()
	// The pipes are read only when a thread sleeps in read(2) or write(2),
	// once per reading.
	var ends map[string]pipeEnd
	pipes := func() map[string]pipeEnd {
		if ends == nil {
			ends = pipeEnds(pid)
		}
		return ends
	}
	wf := WaitFor{GILLocked: -1, Lines: -1}
	for _, t := range tids {
		base := filepath.Join(dir, t.Name())
		p, err := proc.ReadTask(pid, t.Name())
		if err != nil {
			continue // ended meanwhile
		}
		w := ThreadWait{TID: t.Name(), Name: p.Comm}
		line := strings.TrimSpace(readProc(base, "syscall"))
		w.Syscall = line
		w.Switches = switches(readProc(base, "status"))
		w.Asleep = p.State == 'S' || p.State == 'D'
		if sc := strings.Fields(line); w.Asleep && len(sc) >= 5 {
			w.What, w.Holder, w.kind = classify(sc, k, mem, pipes)
		}
		wf.Threads = append(wf.Threads, w)
	}
	if len(wf.Threads) == 0 {
		return WaitFor{}, false
	}
	sort.Slice(wf.Threads, func(a, b int) bool { return wf.Threads[a].TID < wf.Threads[b].TID })
	if k.GIL != 0 {
		if locked, ok := mem.u32(k.GIL + k.LockedAt); ok {
			wf.GILLocked = int(int32(locked))
		}
		if k.TIDAt != 0 {
			if ts, ok := mem.u64(k.GIL + k.HolderAt); ok && ts != 0 {
				if tid, ok := mem.u64(ts + k.TIDAt); ok {
					wf.GILHolder = strconv.FormatUint(tid, 10)
				}
			}
		}
	}
	if k.LinesAt != 0 {
		if n, ok := mem.u64(k.LinesAt); ok {
			wf.Lines = int64(n)
		}
	}
	return wf, true
}

// switches is "voluntary/involuntary" from /proc's status.
func switches(status string) string {
	var s string
	for _, l := range strings.Split(status, "\n") {
		if strings.HasPrefix(l, "voluntary_ctxt_switches:") || strings.HasPrefix(l, "nonvoluntary_ctxt_switches:") {
			s += strings.TrimSpace(l[strings.IndexByte(l, ':')+1:]) + "/"
		}
	}
	return s
}

// classify names what a sleeping thread's system call waits for (x86-64
// numbers), the holder when it is one of the extension's locks, and
// whether only the process can end it.
func classify(sc []string, k *Known, mem *memReader, pipes func() map[string]pipeEnd) (string, string, waitKind) {
	arg := func(i int) uint64 { v, _ := strconv.ParseUint(strings.TrimPrefix(sc[i], "0x"), 16, 64); return v }
	switch sc[0] {
	case "202": // futex(uaddr, op, val, timeout)
		op := arg(2) & 0x7f
		if op != 0 && op != 9 {
			return "", "", waitNone
		}
		for _, w := range k.GILWords {
			if arg(1) == w {
				return "the GIL", "", waitGIL
			}
		}
		if arg(4) != 0 {
			// A timed wait: a bounded one (a lock's acquire(timeout),
			// logjam.hpp's try_lock_for) ends by itself; the GIL's cannot be
			// told from it without the announcement.
			if len(k.GILWords) == 0 {
				return "", "", waitUnread
			}
			return "", "", waitNone
		}
		if name, ok := k.Locks[arg(1)]; ok {
			// A glibc mutex keeps its owner's thread id at offset 8.
			if owner, ok := mem.u32(arg(1) + 8); ok && owner != 0 {
				return name, strconv.FormatUint(uint64(owner), 10), waitStuck
			}
			return name, "", waitStuck
		}
		return fmt.Sprintf("a lock or a condition (futex %s)", sc[1]), "", waitStuck
	case "1": // write(fd, ...)
		if e, ok := pipes()[strconv.FormatUint(arg(1), 10)]; ok && e.readerHere {
			return fmt.Sprintf("room on a pipe this process drains (write(2) on fd %d)", arg(1)), "", waitStuck
		}
	case "0": // read(fd, ...)
		if e, ok := pipes()[strconv.FormatUint(arg(1), 10)]; ok && e.writerHere {
			return fmt.Sprintf("bytes on a pipe only this process writes (read(2) on fd %d)", arg(1)), "", waitStuck
		}
	}
	return "", "", waitNone
}

// stuck reports whether every thread of wf sleeps in a wait only the
// process can end, the GIL's waiters behind a GIL that is held.
func (wf WaitFor) stuck() bool {
	gil := false
	for _, t := range wf.Threads {
		switch t.kind {
		case waitGIL:
			gil = true
		case waitStuck:
		default:
			return false
		}
	}
	return !gil || wf.GILLocked == 1
}

// gilWaiterAwake reports whether wf differs from the stuck reading
// before only by GIL waiters caught awake (each wakes every switch
// interval to ask again).
func (wf WaitFor) gilWaiterAwake(before WaitFor) bool { return wf.unmoved(before, true) }

// unmoved reports whether wf has before's threads, each GIL waiter of
// before waiting for the GIL again (or, with awake, caught awake asking
// for it), every other one in before's stuck wait, never woken since (its
// switch counts unchanged).
func (wf WaitFor) unmoved(before WaitFor, awake bool) bool {
	if len(wf.Threads) != len(before.Threads) {
		return false
	}
	for i, t := range wf.Threads {
		b := before.Threads[i]
		switch {
		case t.TID != b.TID:
			return false
		case b.kind == waitGIL:
			if t.kind != waitGIL && (!awake || t.Asleep) {
				return false
			}
		case b.kind != waitStuck || t.kind != waitStuck || t.Syscall != b.Syscall || t.Switches != b.Switches:
			return false
		}
	}
	return true
}

// Proves reports whether two stuck readings, before and then wf, prove a
// hang: the same threads in the same waits, every thread but the GIL's
// waiters asleep throughout (its switch counts unchanged, so it never
// woke), the GIL held between them (then by one of those sleepers: nobody
// else can have let it go, and its waiters only ask again), and every
// telemetry line the child wrote (a mark the parent answers, such as a
// SIGINT that would end a wait) handled by the parent: handled is the
// count of lines the parent had handled (its answers sent) when wf's
// reading began; wf.Lines is read at its end. Then nothing in
// the process can move again: every wait is one only the process could end.
func (wf WaitFor) Proves(before WaitFor, handled int64) bool {
	return before.stuck() && wf.stuck() && wf.unmoved(before, false) &&
		wf.Lines <= handled && (wf.Lines >= 0 || handled == 0)
}

// Cycle names a stuck reading's wait-for state: who waits for what, who
// holds it; "" when some thread can still move.
func (wf WaitFor) Cycle() string {
	if !wf.stuck() {
		return ""
	}
	names := map[string]string{}
	gilWaiters := 0
	for _, t := range wf.Threads {
		names[t.TID] = fmt.Sprintf("%s[%s]", t.Name, t.TID)
		if t.kind == waitGIL {
			gilWaiters++
		}
	}
	who := func(tid string) string {
		if n, ok := names[tid]; ok {
			return n
		}
		return "thread " + tid + " (not of this process)"
	}
	holder := ""
	if wf.GILLocked == 1 {
		holder = wf.GILHolder // last_holder is the holder only while the GIL is held
	}
	if holder == "" && gilWaiters > 0 && gilWaiters == len(wf.Threads)-1 {
		for _, t := range wf.Threads {
			if t.kind != waitGIL {
				holder = t.TID
			}
		}
	}
	parts := make([]string, 0, len(wf.Threads))
	for _, t := range wf.Threads {
		s := names[t.TID] + " waits for " + t.What
		switch {
		case t.kind == waitGIL && holder != "":
			s += ", held by " + who(holder)
		case t.Holder != "":
			s += ", held by " + who(t.Holder)
		}
		if t.kind != waitGIL && t.TID == holder {
			s += ", holding the GIL"
		}
		parts = append(parts, s)
	}
	return "every thread waits for what only the process can give: " + strings.Join(parts, "; ")
}

// String describes every thread of a reading, stuck or not (the raw state
// kept at a deadline).
func (wf WaitFor) String() string {
	var parts []string
	asleep := 0
	for _, t := range wf.Threads {
		s := fmt.Sprintf("%s[%s]", t.Name, t.TID)
		switch {
		case !t.Asleep:
			s += " running"
		case t.What != "":
			asleep++
			s += " waits for " + t.What
		default:
			asleep++
			s += " asleep in " + syscallText(t.Syscall)
		}
		parts = append(parts, s)
	}
	gil := ""
	switch {
	case wf.GILHolder != "" && wf.GILLocked == 1:
		gil = "; the GIL held by thread " + wf.GILHolder
	case wf.GILLocked == 0:
		gil = "; the GIL free"
	}
	return fmt.Sprintf("%d of %d threads asleep: %s%s", asleep, len(wf.Threads), strings.Join(parts, "; "), gil)
}

// syscallText is a syscall line with its number named and its first
// argument.
func syscallText(line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) >= 2:
		return syscallName(f[0]) + "(" + f[1] + ")"
	case len(f) == 1:
		return f[0]
	}
	return "?"
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
	case "61":
		return "wait4"
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

func readProc(base, name string) string {
	b, _ := os.ReadFile(filepath.Join(base, name))
	return string(b)
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

// memReader reads a child's memory (/proc/PID/mem: the parent may, as
// the child's tracer-to-be; opened once per reading, only when needed).
type memReader struct {
	path string
	f    *os.File
	err  error
}

func procMem(pid int) *memReader { return &memReader{path: fmt.Sprintf("/proc/%d/mem", pid)} }

func (m *memReader) read(addr uint64, b []byte) bool {
	if m.f == nil && m.err == nil {
		m.f, m.err = os.Open(m.path)
	}
	if m.err != nil || addr == 0 || addr > 1<<62 {
		return false
	}
	n, err := m.f.ReadAt(b, int64(addr))
	return err == nil && n == len(b)
}

func (m *memReader) u32(addr uint64) (uint32, bool) {
	var b [4]byte
	if !m.read(addr, b[:]) {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b[:]), true
}

func (m *memReader) u64(addr uint64) (uint64, bool) {
	var b [8]byte
	if !m.read(addr, b[:]) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

func (m *memReader) close() {
	if m.f != nil {
		m.f.Close()
	}
}
