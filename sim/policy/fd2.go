package policy

import (
	"logjam/internal/pytext"
	"logjam/sim"
)

// fd2Direct is the first fix: every line a direct write, no room check.
type fd2Direct struct{ *kit }

func (p *fd2Direct) Name() string                { return "fd2" }
func (p *fd2Direct) Enter(*sim.Thread)           {}
func (p *fd2Direct) Exit(*sim.Thread) *sim.PyErr { return nil }
func (p *fd2Direct) Emit(t *sim.Thread, l sim.Line) {
	p.directLine(t, l, "every line to fd 2")
}
func (p *fd2Direct) ExceptionText(main, appended []byte) (string, *sim.PyErr) {
	return p.setString(pytext.FullExceptionText(main, appended))
}
