package policy

import (
	"sync"

	"logjam/daemon"
	"logjam/pytext"
	"logjam/sim"
	"logjam/sim/keep"
	"logjam/telemetry"
)

// pyStderr is the original: every line, fatal included, is a strict
// Python write; any exception from the decode or the write is swallowed
// and that line is lost.
type pyStderr struct{ *kit }

func (p *pyStderr) Name() string                { return "pystderr" }
func (p *pyStderr) Enter(*sim.Thread)           {}
func (p *pyStderr) Exit(*sim.Thread) *sim.PyErr { return nil }
func (p *pyStderr) Emit(t *sim.Thread, l sim.Line) {
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
func (p *pyStderr) ExceptionText(main, appended []byte) (string, *sim.PyErr) {
	return strictText(pytext.FullExceptionText(main, appended))
}

// fd2Direct is the first fix: every line a direct write, no room check.
type fd2Direct struct{ *kit }

func (p *fd2Direct) Name() string                { return "fd2" }
func (p *fd2Direct) Enter(*sim.Thread)           {}
func (p *fd2Direct) Exit(*sim.Thread) *sim.PyErr { return nil }
func (p *fd2Direct) Emit(t *sim.Thread, l sim.Line) {
	p.directLine(t, l, "every line to fd 2")
}
func (p *fd2Direct) ExceptionText(main, appended []byte) (string, *sim.PyErr) {
	return strictText(pytext.FullExceptionText(main, appended))
}

// bufferedSink is the second round: a call keeps its lines and flushes them
// at the outermost exit.
type bufferedSink struct{ *kit }

func (p *bufferedSink) Name() string { return "buffered" }
func (p *bufferedSink) Enter(t *sim.Thread) {
	*p.call(t) = callState{}
}
func (p *bufferedSink) Emit(t *sim.Thread, l sim.Line) {
	switch {
	case l.Level == sim.Fatal:
		p.directLine(t, l, "fatal line alone, then abort")
	case t.InCall():
		p.keep(t, l, "in a call")
	default:
		p.directLine(t, l, "outside a call")
	}
}
func (p *bufferedSink) Exit(t *sim.Thread) *sim.PyErr {
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
func (p *bufferedSink) ExceptionText(main, appended []byte) (string, *sim.PyErr) {
	return strictText(pytext.FullExceptionText(main, appended))
}

// adaptiveRules are the differences between the third round and the PR as
// merged.
type adaptiveRules struct {
	name string
	// daemonDirect: the daemon routing rule for this platform and version.
	daemonDirect func(in *sim.Interp) bool
	// fatalContext: a fatal line first writes the kept lines while there is room.
	fatalContext bool
	// escapeAll: the whole exception message escaped (else main text strict).
	escapeAll bool
	// careful: the macOS small-pipe rule in the room check.
	careful bool
}

var thirdRoundRules = adaptiveRules{
	name:         "adaptive",
	daemonDirect: func(*sim.Interp) bool { return true },
}

var mergedRules = adaptiveRules{
	name:         "merged",
	daemonDirect: func(in *sim.Interp) bool { return daemon.Unwinds(string(in.Platform), in.Python.Hex()) },
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

func (p *adaptiveSink) daemonRule(t *sim.Thread) bool {
	return t.Daemon && p.rules.daemonDirect(p.rt.In)
}

func (p *adaptiveSink) Enter(t *sim.Thread) {
	*p.call(t) = callState{direct: !p.rt.In.StderrReplaced() || p.daemonRule(t)}
}

func (p *adaptiveSink) Emit(t *sim.Thread, l sim.Line) {
	switch {
	case l.Level == sim.Fatal:
		if p.rules.fatalContext && t.InCall() {
			tk := p.take(t)
			left, _ := p.directWhileRoom(t, tk, p.rules.careful)
			// Telemetry only: the kept lines this fatal path wrote to fd 2
			// (the oldest first; the room check stops at the first line
			// with no room), for the ledger's fatal-path rule.
			p.rt.Tel.Emit(telemetry.FatalFlush{Thread: t.Name, Fatal: l.Seq,
				Written: tk.lines[:max(0, len(tk.lines)-left)], Left: left})
		}
		p.directLine(t, l, "fatal line, then abort")
	case !t.InCall():
		p.directLine(t, l, "outside a call, no room check")
	case p.call(t).direct:
		if p.roomCheck(RoomWait, p.rules.careful) {
			p.directLine(t, l, "direct, room on fd 2")
			return
		}
		p.call(t).direct = false
		p.call(t).stalled = true
		p.keep(t, l, "no room on fd 2 for 100 ms")
	default:
		p.keep(t, l, "sys.stderr replaced or fd 2 stalled")
	}
}

func (p *adaptiveSink) Exit(t *sim.Thread) *sim.PyErr {
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

func (p *adaptiveSink) ExceptionText(main, appended []byte) (string, *sim.PyErr) {
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
	k.rt.In.AtExit(func(t *sim.Thread) { p.flushOutside(t, "at exit") })
	return p
}

func (p *logjamSink) Emit(t *sim.Thread, l sim.Line) {
	switch {
	case l.Level == sim.Fatal || (t.InCall() && !p.call(t).stalled):
		p.adaptiveSink.Emit(t, l)
	case t.InCall(): // stalled: re-check with no wait; on room, catch up and go direct
		if p.roomCheck(0, true) {
			p.directAll(t, p.take(t), "room again after a stall")
			p.call(t).direct, p.call(t).stalled = true, false
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

func (p *logjamSink) Exit(t *sim.Thread) *sim.PyErr {
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
func (p *logjamSink) flushOutside(t *sim.Thread, why string) {
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

// joinExceptionText is pytext.FullExceptionText for text already decoded
// part by part (the third round decoded the two parts differently).
func joinExceptionText(main, appended string) string {
	if appended == "" {
		return main
	}
	return main + pytext.RuntimeErrorsSeparator + appended
}
