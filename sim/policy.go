package sim

import (
	"fmt"
	"logjam/daemon"
	"logjam/scenario"
	"logjam/telemetry"
	"sort"
	"strings"
	"sync"
	"time"

	"logjam/failpoints"
	"logjam/pipes"
	"logjam/pytext"
	"logjam/sim/keep"
)

// Policy is the log sink: where a runtime log line goes. Each design of the
// log path in the seed's history is one Policy; SCENARIOS.md words their rules.
type Policy interface {
	Name() string
	// Enter runs at the outermost entry of a binding call (GIL held).
	Enter(t *Thread)
	// Emit takes one log line from any thread, in or out of a call.
	Emit(t *Thread, l Line)
	// Exit runs at the outermost exit (GIL held, no backend lock held) and
	// returns an exception to raise after the call, if any.
	Exit(t *Thread) *PyErr
	// ExceptionText turns the 127-byte message and the call's Error lines
	// into the Python exception text, or the UnicodeDecodeError a strict
	// decode raises.
	ExceptionText(main, appended []byte) (string, *PyErr)
}

// Policies lists the policy names in the order of the seed's history.
var Policies = scenario.Policies

// NewPolicy builds a policy by name.
func NewPolicy(name string, rt *Runtime) (Policy, error) {
	k := &kit{rt: rt}
	switch name {
	case "pystderr":
		return &pyStderr{k}, nil
	case "fd2":
		return &fd2Direct{k}, nil
	case "buffered":
		return &bufferedSink{k}, nil
	case "adaptive":
		return &adaptiveSink{kit: k, rules: thirdRoundRules}, nil
	case "merged":
		return &adaptiveSink{kit: k, rules: mergedRules}, nil
	case "logjam":
		return newLogjamSink(k), nil
	}
	return nil, fmt.Errorf("unknown policy %q (accepted: %s)", name, strings.Join(Policies, ", "))
}

// callState is a thread's sink state for its current outermost call.
type callState struct {
	direct  bool // lines go straight to fd 2
	stalled bool // direct was turned off by a full pipe, not a replaced sys.stderr
	kept    keep.Buffer
}

// kit holds the pieces every policy is built from; each exists once.
type kit struct{ rt *Runtime }

// RoomWait is the room check's wait for a full pipe.
const RoomWait = 100 * time.Millisecond

// roomCheck: fd 2 a pipe -> wait up to wait for room; anything else has
// room. careful selects the merged fix's macOS rule (a pipe reported as
// <= 16 KiB is full once 512 bytes are queued) over trusting poll, which on
// the macos profile answers as XNU does and can report room that is not there.
func (k *kit) roomCheck(wait time.Duration, careful bool) bool {
	if k.rt.FD2.Kind != FDPipe {
		return true
	}
	profile := pipes.Linux
	if k.rt.In.Platform == MacOS {
		profile = pipes.MacOS
	}
	deadline := time.Now().Add(wait)
	for {
		room, err := profile.HasRoom(2, time.Until(deadline))
		if err != nil {
			return true
		}
		if room && careful && profile == pipes.MacOS {
			if full, err := pipes.SmallPipeFull(2); err == nil && full {
				room = false
			}
		}
		if room || !time.Now().Before(deadline) {
			return room
		}
		if careful && profile == pipes.MacOS {
			// The careful rule has no kernel wake-up; look again shortly.
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// directWrite is C stdio: the stdio lock is held, the GIL is kept if held,
// and the write blocks while fd 2 has no room.
func (k *kit) directWrite(t *Thread, b []byte) {
	k.rt.Stdio.Acquire(t)
	if ms, ok := failpoints.Int(failpoints.DirectWriteDelay); ok && ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	k.rt.FD2.write(t, b, false)
	k.rt.Stdio.Release(t)
}

func (k *kit) directLine(t *Thread, l Line, why string) {
	k.rt.Route(t, l, "fd2", why)
	k.directWrite(t, l.Bytes)
}

// pythonWrite writes text to the current sys.stderr with the GIL held,
// taking it first if the thread does not hold it.
func (k *kit) pythonWrite(t *Thread, text string) *PyErr {
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

func (k *kit) keep(t *Thread, l Line, why string) {
	t.call.kept.Add(l.Bytes)
	k.rt.Route(t, l, "kept", why)
}

// taken is what a flush writes: the left-out note (if any), then the lines.
type taken struct {
	note  []byte
	lines [][]byte
}

func (tk taken) empty() bool { return tk.note == nil && len(tk.lines) == 0 }

func (tk taken) bytes() []byte {
	var b []byte
	b = append(b, tk.note...)
	for _, l := range tk.lines {
		b = append(b, l...)
	}
	return b
}

func (k *kit) take(t *Thread) taken {
	note, lines := t.call.kept.Take()
	return taken{note: note, lines: lines}
}

// flushEscaped is the flush: one Python write of the note and kept lines,
// decoded with backslashreplace.
func (k *kit) flushEscaped(t *Thread, tk taken) *PyErr {
	k.rt.Tel.Emit(telemetry.Flush{Thread: t.Name, Lines: len(tk.lines), Note: string(tk.note), To: k.rt.In.Stderr().Name()})
	return k.pythonWrite(t, pytext.DecodeEscaped(tk.bytes()))
}

// directAll writes a flush's lines straight to fd 2 (the fallback after a
// failed or interrupted flush; repeats are allowed).
func (k *kit) directAll(t *Thread, tk taken, why string) {
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
func (k *kit) directWhileRoom(t *Thread, tk taken, careful bool) (leftLines, leftBytes int) {
	all := tk.lines
	if tk.note != nil {
		all = append([][]byte{tk.note}, all...)
	}
	for i, l := range all {
		if !k.roomCheck(RoomWait, careful) {
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

func strictText(b []byte) (string, *PyErr) {
	s, err := pytext.DecodeStrict(b)
	if err != nil {
		return "", &PyErr{Type: "UnicodeDecodeError", Msg: err.Error()}
	}
	return s, nil
}

// pyStderr is the original: every line, fatal included, is a strict
// Python write; any exception from the decode or the write is swallowed
// and that line is lost.
type pyStderr struct{ *kit }

func (p *pyStderr) Name() string        { return "pystderr" }
func (p *pyStderr) Enter(*Thread)       {}
func (p *pyStderr) Exit(*Thread) *PyErr { return nil }
func (p *pyStderr) Emit(t *Thread, l Line) {
	s, derr := strictText(l.Bytes)
	if derr != nil {
		p.rt.Route(t, l, "dropped", "swallowed "+derr.Error())
		return
	}
	p.rt.Route(t, l, "python", "pythonbuf: sys.stderr.write")
	if err := p.pythonWrite(t, s); err != nil {
		p.rt.Route(t, l, "dropped", "swallowed "+err.Type+" from sys.stderr.write")
	}
}
func (p *pyStderr) ExceptionText(main, appended []byte) (string, *PyErr) {
	return strictText(pytext.FullExceptionText(main, appended))
}

// fd2Direct is the first fix: every line a direct write, no room check.
type fd2Direct struct{ *kit }

func (p *fd2Direct) Name() string        { return "fd2" }
func (p *fd2Direct) Enter(*Thread)       {}
func (p *fd2Direct) Exit(*Thread) *PyErr { return nil }
func (p *fd2Direct) Emit(t *Thread, l Line) {
	p.directLine(t, l, "every line to fd 2")
}
func (p *fd2Direct) ExceptionText(main, appended []byte) (string, *PyErr) {
	return strictText(pytext.FullExceptionText(main, appended))
}

// bufferedSink is the second round: a call keeps its lines and flushes them
// at the outermost exit.
type bufferedSink struct{ *kit }

func (p *bufferedSink) Name() string { return "buffered" }
func (p *bufferedSink) Enter(t *Thread) {
	t.call = callState{}
}
func (p *bufferedSink) Emit(t *Thread, l Line) {
	switch {
	case l.Level == Fatal:
		p.directLine(t, l, "fatal line alone, then abort")
	case t.depth > 0:
		p.keep(t, l, "in a call")
	default:
		p.directLine(t, l, "outside a call")
	}
}
func (p *bufferedSink) Exit(t *Thread) *PyErr {
	saved := p.rt.In.Signals.Check(t) // PyErr_CheckSignals, saving a KeyboardInterrupt
	tk := p.take(t)
	if tk.empty() {
		return saved
	}
	err := p.flushEscaped(t, tk)
	switch {
	case err == nil:
	case err.IsKeyboardInterrupt() && saved == nil:
		// The lines count as written: what the writer did not write is lost.
		return err
	default:
		p.directAll(t, tk, "flush raised "+err.Type)
	}
	return saved
}
func (p *bufferedSink) ExceptionText(main, appended []byte) (string, *PyErr) {
	return strictText(pytext.FullExceptionText(main, appended))
}

// adaptiveRules are the differences between the third round and the PR as
// merged.
type adaptiveRules struct {
	name string
	// daemonDirect: the daemon routing rule for this platform and version.
	daemonDirect func(in *Interp) bool
	// fatalContext: a fatal line first writes the kept lines while there is room.
	fatalContext bool
	// escapeAll: the whole exception message escaped (else main text strict).
	escapeAll bool
	// careful: the macOS small-pipe rule in the room check.
	careful bool
}

var thirdRoundRules = adaptiveRules{
	name:         "adaptive",
	daemonDirect: func(*Interp) bool { return true },
}

var mergedRules = adaptiveRules{
	name:         "merged",
	daemonDirect: func(in *Interp) bool { return daemon.Unwinds(string(in.Platform), in.Python.Hex()) },
	fatalContext: true,
	escapeAll:    true,
	careful:      true,
}

// adaptiveSink is the third round and, with mergedRules, the PR as merged:
// direct while sys.stderr is the original (or for a daemon thread), keep
// after a stall or when sys.stderr is replaced.
type adaptiveSink struct {
	*kit
	rules adaptiveRules
}

func (p *adaptiveSink) Name() string { return p.rules.name }

func (p *adaptiveSink) daemonRule(t *Thread) bool {
	return t.Daemon && p.rules.daemonDirect(p.rt.In)
}

func (p *adaptiveSink) Enter(t *Thread) {
	t.call = callState{direct: !p.rt.In.StderrReplaced() || p.daemonRule(t)}
}

func (p *adaptiveSink) Emit(t *Thread, l Line) {
	switch {
	case l.Level == Fatal:
		if p.rules.fatalContext && t.depth > 0 {
			tk := p.take(t)
			left, _ := p.directWhileRoom(t, tk, p.rules.careful)
			// Telemetry only: the kept lines this fatal path wrote to fd 2
			// (the oldest first; the room check stops at the first line
			// with no room), for the ledger's fatal-path rule.
			p.rt.Tel.Emit(telemetry.FatalFlush{Thread: t.Name, Fatal: l.Seq,
				Written: tk.lines[:max(0, len(tk.lines)-left)], Left: left})
		}
		p.directLine(t, l, "fatal line, then abort")
	case t.depth == 0:
		p.directLine(t, l, "outside a call, no room check")
	case t.call.direct:
		if p.roomCheck(RoomWait, p.rules.careful) {
			p.directLine(t, l, "direct, room on fd 2")
			return
		}
		t.call.direct = false
		t.call.stalled = true
		p.keep(t, l, "no room on fd 2 for 100 ms")
	default:
		p.keep(t, l, "sys.stderr replaced or fd 2 stalled")
	}
}

func (p *adaptiveSink) Exit(t *Thread) *PyErr {
	tk := p.take(t)
	if tk.empty() {
		return nil
	}
	if p.daemonRule(t) {
		n, b := p.directWhileRoom(t, tk, p.rules.careful)
		if n > 0 {
			p.rt.Tel.Emit(telemetry.Dropped{Thread: t.Name, Lines: n, Bytes: b, Why: "daemon: no room, dropped silently"})
		}
		return nil
	}
	if err := p.flushEscaped(t, tk); err != nil {
		p.directAll(t, tk, "flush raised "+err.Type)
		if err.IsKeyboardInterrupt() {
			p.rt.In.Signals.SetInterrupt() // replayed after the call
		}
	}
	return nil
}

func (p *adaptiveSink) ExceptionText(main, appended []byte) (string, *PyErr) {
	if p.rules.escapeAll {
		return pytext.DecodeEscaped(pytext.FullExceptionText(main, appended)), nil
	}
	m, err := strictText(main)
	if err != nil {
		return "", err
	}
	return joinExceptionText(m, pytext.DecodeEscaped(appended)), nil
}

// logjamSink is ours: merged, plus recovery after a stall, no blocking
// write with the GIL held outside a call, the flush's exception re-raised
// as itself, and a counted note for a daemon's unwritten lines.
type logjamSink struct {
	*adaptiveSink

	mu      sync.Mutex
	outside keep.Buffer // lines logged outside a call while fd 2 had no room
	lostN   int         // a daemon's lines that could not be written
	lostB   int
}

func newLogjamSink(k *kit) *logjamSink {
	r := mergedRules
	r.name = "logjam"
	p := &logjamSink{adaptiveSink: &adaptiveSink{kit: k, rules: r}}
	k.rt.In.AtExit(func(t *Thread) { p.flushOutside(t, "at exit") })
	return p
}

func (p *logjamSink) Emit(t *Thread, l Line) {
	switch {
	case l.Level == Fatal || (t.depth > 0 && !t.call.stalled):
		p.adaptiveSink.Emit(t, l)
	case t.depth > 0: // stalled: re-check with no wait; on room, catch up and go direct
		if p.roomCheck(0, true) {
			p.directAll(t, p.take(t), "room again after a stall")
			t.call.direct, t.call.stalled = true, false
			p.directLine(t, l, "direct again after a stall")
			return
		}
		p.keep(t, l, "fd 2 still stalled")
	default:
		wait := RoomWait
		if t.HoldsGIL() {
			wait = 0 // never block while holding the GIL
		}
		if p.roomCheck(wait, true) {
			p.directLine(t, l, "outside a call, room on fd 2")
			return
		}
		p.mu.Lock()
		p.outside.Add(l.Bytes)
		p.mu.Unlock()
		p.rt.Route(t, l, "kept", "outside a call, no room: kept process-wide")
	}
}

func (p *logjamSink) Exit(t *Thread) *PyErr {
	p.flushOutside(t, "next outermost exit")
	tk := p.take(t)
	if tk.empty() {
		return nil
	}
	if p.daemonRule(t) {
		n, b := p.directWhileRoom(t, tk, true)
		if n > 0 {
			p.mu.Lock()
			p.lostN += n
			p.lostB += b
			p.mu.Unlock()
		}
		return nil
	}
	if err := p.flushEscaped(t, tk); err != nil {
		p.directAll(t, tk, "flush raised "+err.Type)
		return err // re-raised as itself: the handler ran once
	}
	return nil
}

// flushOutside writes the process-wide kept lines and the daemon note
// through sys.stderr, falling back to fd 2.
func (p *logjamSink) flushOutside(t *Thread, why string) {
	p.mu.Lock()
	note, lines := p.outside.Take()
	if p.lostN > 0 {
		extra := keep.FormatNote(p.lostN, p.lostB)
		note = append(extra, note...)
		p.lostN, p.lostB = 0, 0
	}
	p.mu.Unlock()
	tk := taken{note: note, lines: lines}
	if tk.empty() {
		return
	}
	if !t.HoldsGIL() {
		t.AcquireGIL()
		defer t.ReleaseGIL()
	}
	if err := p.flushEscaped(t, tk); err != nil {
		p.directAll(t, tk, why+": flush raised "+err.Type)
	}
}

// PolicyNames is for messages: the accepted names, sorted.
func PolicyNames() string {
	s := append([]string(nil), Policies...)
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// joinExceptionText is pytext.FullExceptionText for text already decoded
// part by part (the third round decoded the two parts differently).
func joinExceptionText(main, appended string) string {
	if appended == "" {
		return main
	}
	return main + pytext.RuntimeErrorsSeparator + appended
}
