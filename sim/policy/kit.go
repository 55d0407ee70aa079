// Package policy holds the six log-sink policies of the seed's history
// (pystderr, fd2, buffered, adaptive, merged, logjam; docs/SCENARIOS.md words
// their rules), the toolkit they are built from (room check, direct and
// Python writes, keep and flush), each thread's call state, and each sink's
// C++ frames for a forced unwind (frames.go).
package policy

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"logjam/failpoints"
	"logjam/internal/pytext"
	"logjam/pipes"
	"logjam/sim"
	"logjam/sim/keep"
	"logjam/telemetry"
)

// ByName returns the maker of the policy called name (axes.Policies).
func ByName(name string) (sim.PolicyMaker, error) {
	var mk func(k *kit) sim.Policy
	switch name {
	case "pystderr":
		mk = func(k *kit) sim.Policy { return &pyStderr{k} }
	case "fd2":
		mk = func(k *kit) sim.Policy { return &fd2Direct{k} }
	case "buffered":
		mk = func(k *kit) sim.Policy { return &bufferedSink{k} }
	case "adaptive":
		mk = func(k *kit) sim.Policy { return &adaptiveSink{kit: k, rules: thirdRoundRules} }
	case "merged":
		mk = func(k *kit) sim.Policy { return &adaptiveSink{kit: k, rules: mergedRules} }
	case "logjam":
		mk = func(k *kit) sim.Policy { return newLogjamSink(k) }
	default:
		return nil, sim.UnknownPolicy(name)
	}
	return func(rt *sim.Runtime) (sim.Policy, error) { return mk(&kit{rt: rt}), nil }, nil
}

// callState is a thread's sink state for its current outermost call.
type callState struct {
	direct  bool // lines go straight to fd 2
	stalled bool // direct was turned off by a full pipe, not a replaced sys.stderr
	kept    keep.Buffer
}

// kit holds the pieces every policy is built from; each exists once. It
// owns each thread's call state.
type kit struct {
	rt    *sim.Runtime
	calls sync.Map // *sim.Thread -> *callState
	// retryEINTR: direct writes are a write(2) loop that retries EINTR
	// (logjam's own), not fwrite, which gives up on it.
	retryEINTR bool
}

func (k *kit) base() *kit { return k }

// call is t's state for its current outermost call (only t touches it).
func (k *kit) call(t *sim.Thread) *callState {
	if c, ok := k.calls.Load(t); ok {
		return c.(*callState)
	}
	c, _ := k.calls.LoadOrStore(t, &callState{})
	return c.(*callState)
}

// RoomWait is the room check's wait for a full pipe.
const RoomWait = 100 * time.Millisecond

// roomCheck: fd 2 a pipe -> wait up to wait for room; anything else has
// room. careful selects the merged fix's macOS rule (a pipe reported as
// <= 16 KiB is full once 512 bytes are queued) over trusting poll, which on
// the macos platform answers as XNU does and can report room that is not there.
//
// It looks only once no other thread's write is in flight
// (FD2.AwaitInFlight): whether a write that just let the GIL go has
// filled the pipe, or held its reader, is then the model's state, not the
// scheduler's. No test pins this wait: the write's own (fd2_write.go)
// is what TestAWriteInFlightReachesFD2BeforeTheGILHoldersLine pins.
func (k *kit) roomCheck(t *sim.Thread, wait time.Duration, careful bool) (room bool) {
	if k.rt.FD2.Kind != sim.FDPipe {
		return true
	}
	k.rt.FD2.AwaitInFlight(t)
	defer func() {
		if !room {
			k.rt.FD2.NoteNoRoom() // the stall is felt (scenario barriers)
		}
	}()
	platform := pipes.Linux
	if k.rt.In.Platform == sim.MacOS {
		platform = pipes.MacOS
	}
	deadline := time.Now().Add(wait)
	asked := false
	for {
		var room bool
		var err error
		if k.rt.FD2.HeldBusy(nil) {
			// The room the parent's next read frees is the waiting
			// writers' (the reader hold, sim/fd2_hold.go): none for this check within its bound.
			time.Sleep(time.Until(deadline))
		} else {
			room, err = platform.HasRoom(2, time.Until(deadline))
		}
		if err != nil {
			return true
		}
		if room && careful && platform == pipes.MacOS {
			if full, err := pipes.SmallPipeFull(2); err == nil && full {
				room = false
			}
		}
		if room {
			return true
		}
		if !time.Now().Before(deadline) {
			// The bound has passed with no room. The answer is the
			// parent's reader's state, not the scheduler's: asked, the
			// reader reads what the pipe holds unless stalled, and one
			// more look decides (docs/TRUST.md, "What is still time").
			if asked || !k.rt.FD2.AskReader() {
				return false
			}
			asked = true
			continue
		}
		if careful && platform == pipes.MacOS {
			// The careful rule has no kernel wake-up; look again shortly.
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// writeBounded is the room check that does not serialise writer and
// reader: a non-blocking write first, and only when fd 2 took nothing (or
// not all) a wait for room, bounded by what is left of wait, then a write
// again. It returns the bytes that went out (all of b, unless the bound
// passed); the caller holds the stdio lock. A writer that finds room never
// waits for the reader to drain a whole page, as poll's POLLOUT would make
// it.
func (k *kit) writeBounded(t *sim.Thread, b []byte, wait time.Duration) int {
	n, _ := k.writeBoundedErr(t, b, wait)
	return n
}

// writeBoundedErr is writeBounded that also returns the errno of a try the
// kernel refused for good (EPIPE, ENOSPC, EIO: the bytes given up and
// counted as gone, as try_write does); EAGAIN is "no room" and is waited
// out like a full pipe, never returned.
func (k *kit) writeBoundedErr(t *sim.Thread, b []byte, wait time.Duration) (int, unix.Errno) {
	fd2 := k.rt.FD2
	n, errno := fd2.TryWriteErr(t, b)
	if errno != 0 && errno != unix.EAGAIN {
		return n, errno
	}
	if n == len(b) {
		return n, 0
	}
	deadline := time.Now().Add(wait)
	for n < len(b) {
		left := max(time.Until(deadline), 0)
		var room bool
		if fd2.Kind == sim.FDPipe {
			room = k.roomCheck(t, left, true)
		} else {
			room, _ = pipes.PollWritable(2, left)
		}
		if !room {
			return n, 0
		}
		m, errno := fd2.TryWriteErr(t, b[n:])
		if errno != 0 && errno != unix.EAGAIN {
			return n + m, errno
		}
		if m == 0 {
			if !time.Now().Before(deadline) {
				return n, 0
			}
			// Room was reported that the write did not find (macOS's poll,
			// or less than a whole line): look again shortly.
			time.Sleep(time.Millisecond)
		}
		n += m
	}
	return n, 0
}

// directWrite is C stdio: the stdio lock is held, the GIL is kept if held,
// and the write blocks while fd 2 has no room. A SIGINT that ends a
// blocked write(2) loses the rest of b (fwrite does not retry EINTR),
// unless the sink retries.
func (k *kit) directWrite(t *sim.Thread, b []byte) {
	k.rt.Stdio.Acquire(t)
	if ms, ok := failpoints.Int(failpoints.DirectWriteDelay); ok && ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	k.fdWrite(t, b)
	k.rt.Stdio.Release(t)
}

// fdWrite writes b to fd 2 (stdio lock held): fwrite, or the sink's own
// write(2) loop that retries EINTR.
func (k *kit) fdWrite(t *sim.Thread, b []byte) {
	if k.retryEINTR {
		k.rt.FD2.WriteAll(t, b)
		return
	}
	k.rt.FD2.WriteDirect(t, b)
}

func (k *kit) directLine(t *sim.Thread, l sim.Line, why string) {
	k.rt.Route(t, l, "fd2", why)
	k.directWrite(t, l.Bytes)
}

// pythonWrite writes text to the current sys.stderr with the GIL held,
// taking it first if the thread does not hold it.
func (k *kit) pythonWrite(t *sim.Thread, text string) *sim.PyErr {
	took := false
	if !t.HoldsGIL() {
		t.AcquireGIL()
		took = true
	}
	err := k.rt.In.Stderr().Write(t, text)
	if took {
		t.ReleaseGIL()
	}
	return err
}

func (k *kit) keep(t *sim.Thread, l sim.Line, why string) {
	k.call(t).kept.Add(l.Bytes)
	k.rt.Route(t, l, "kept", why)
}

// taken is what a flush writes: the left-out note (if any), then the lines.
type taken struct {
	note  []byte
	lines [][]byte
	// upto: logjam's process-wide keep, the count of lines ever added to
	// it when these were taken (logjamSink.behind).
	upto uint64
}

func (tk taken) empty() bool { return tk.note == nil && len(tk.lines) == 0 }

// all is the lines to write, the note first.
func (tk taken) all() [][]byte {
	if tk.note == nil {
		return tk.lines
	}
	return append([][]byte{tk.note}, tk.lines...)
}

// then is tk's lines followed by next's (its note first): two notes count
// lines left out of two places, written one after the other.
func (tk taken) then(next taken) taken {
	return taken{note: tk.note, lines: append(tk.lines[:len(tk.lines):len(tk.lines)], next.all()...)}
}

func (tk taken) bytes() []byte {
	var b []byte
	b = append(b, tk.note...)
	for _, l := range tk.lines {
		b = append(b, l...)
	}
	return b
}

func (k *kit) take(t *sim.Thread) taken {
	note, lines := k.call(t).kept.Take()
	return taken{note: note, lines: lines}
}

// flushEscaped is the flush: one Python write of the note and kept lines,
// decoded with backslashreplace.
func (k *kit) flushEscaped(t *sim.Thread, tk taken) *sim.PyErr {
	k.rt.Tel.Emit(telemetry.Flush{Thread: t.Name, Lines: len(tk.lines), Note: string(tk.note), To: k.rt.In.Stderr().Name()})
	return k.pythonWrite(t, pytext.DecodeEscaped(tk.bytes()))
}

// directAll writes a flush's lines straight to fd 2 (the fallback after a
// failed or interrupted flush; repeats are allowed).
func (k *kit) directAll(t *sim.Thread, tk taken, why string) {
	k.rt.Tel.Emit(telemetry.Fallback{Thread: t.Name, Lines: len(tk.lines), Why: why})
	if tk.note != nil {
		k.directWrite(t, tk.note)
	}
	for _, l := range tk.lines {
		k.directWrite(t, l)
	}
}

// directWhileRoom writes lines while the room check finds room and returns
// what was left (lines and bytes).
func (k *kit) directWhileRoom(t *sim.Thread, tk taken, careful bool) (leftLines, leftBytes int) {
	all := tk.all()
	for i, l := range all {
		if !k.roomCheck(t, RoomWait, careful) {
			for _, r := range all[i:] {
				leftLines++
				leftBytes += len(r)
			}
			return
		}
		k.directWrite(t, l)
	}
	return 0, 0
}

// setString is PyErr_SetString of the whole text, as pybind11 raises a C++
// exception's what(): strict; on 3.10 an undecodable text raises the
// exception with its message silently dropped.
func (k *kit) setString(text []byte) (string, *sim.PyErr) {
	s, err := strictText(text)
	if err != nil && k.rt.In.Python.DropsUndecodableMessage() {
		return "", nil
	}
	return s, err
}

func strictText(b []byte) (string, *sim.PyErr) {
	s, err := pytext.DecodeStrict(b)
	if err != nil {
		return "", &sim.PyErr{Type: "UnicodeDecodeError", Msg: err.Error()}
	}
	return s, nil
}
