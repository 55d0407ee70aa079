package policy

import (
	"logjam/internal/pytext"
	"logjam/sim"
)

// pyStderr is the original: std::cerr (unitbuf) over pybind11's
// pythonbuf. Every line, fatal included, is decoded strictly and written
// with sys.stderr.write and .flush; a decode or a write that raises makes
// pythonbuf throw error_already_set out of the noexcept ostream::sentry
// destructor: std::terminate, SIGABRT.
type pyStderr struct{ *kit }

func (p *pyStderr) Name() string                { return "pystderr" }
func (p *pyStderr) Enter(*sim.Thread)           {}
func (p *pyStderr) Exit(*sim.Thread) *sim.PyErr { return nil }
func (p *pyStderr) Emit(t *sim.Thread, l sim.Line) {
	s, derr := strictText(l.Bytes)
	if derr != nil {
		p.terminate(t, l, derr)
	}
	p.rt.Route(t, l, "python", "pythonbuf: sys.stderr.write")
	if err := p.pythonWrite(t, s); err != nil {
		p.terminate(t, l, err)
	}
}
func (p *pyStderr) terminate(t *sim.Thread, l sim.Line, err *sim.PyErr) {
	p.rt.Route(t, l, "dropped", "pythonbuf threw error_already_set ("+err.Type+")")
	p.rt.Abort("std::terminate: error_already_set (" + err.Type + ") thrown out of the noexcept ostream::sentry destructor")
}
func (p *pyStderr) ExceptionText(main, appended []byte) (string, *sim.PyErr) {
	return p.setString(pytext.FullExceptionText(main, appended))
}
