package policy

import (
	"logjam/internal/pytext"
	"logjam/sim"
	"logjam/telemetry"
)

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
		if p.roomCheck(t, RoomWait, p.rules.careful) {
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
	// The appended errors escaped, then the whole text decoded strictly (a
	// main text cut inside a character meets the separator: "invalid
	// continuation byte"). Not version-dependent: the decode raises itself.
	return strictText(pytext.FullExceptionText(main, []byte(pytext.DecodeEscaped(appended))))
}
