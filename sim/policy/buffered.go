package policy

import (
	"logjam/internal/pytext"
	"logjam/sim"
)

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
	return p.setString(pytext.FullExceptionText(main, appended))
}
