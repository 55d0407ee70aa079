package schedule

// forwarderFatalAxis is a Fatal line on a pipe an in-process forwarder
// drains (docs/CONTRACT.md, "A Fatal line on a forwarder's pipe"). It has
// no fields of its own: it is fd 2's kind (FD2) meeting the abort (Abort),
// drawn after the older axes' draws (its place, DrawAt), which keep forwarders
// away from an abort (so that every older seed keeps its schedule).
type forwarderFatalAxis struct{ noAxisPart }

func (forwarderFatalAxis) Name() string { return "forwarder-fatal" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a forwarderFatalAxis) Draws() []DrawAt { return []DrawAt{{21, a.draw}} }

// InContract: what reaches fd 2's outliving copy is what logjam kept (a
// call holding the GIL keeps every line on a forwarder's pipe) and what is
// still in the pipe; a chunk the forwarder read and holds, waiting for the
// GIL, dies with the process. The forwarder reads only when every other
// thread waits for what only the process can end, so only a run whose one
// thread makes one call, holding the GIL from its first line to the
// abort, gives it nothing to hold.
func (forwarderFatalAxis) InContract(s Schedule) error {
	k := s.Sink
	if k.Abort == nil || !k.FD2.forwarded() {
		return nil
	}
	switch {
	case !k.Abort.Fatal:
		return outside("a foreign abort with fd 2 %s (what the forwarder's pipe holds dies: no fatal path)", k.FD2.Kind)
	case len(k.Threads) > 1 || k.Daemons > 0:
		return outside("a Fatal line on fd 2 %s with other threads (a chunk the forwarder read of their lines waits for the GIL in its hands and dies)", k.FD2.Kind)
	case len(k.Threads[0].Calls) != 1 || k.outsideLines() > 0 || k.poolLines() > 0:
		return outside("a Fatal line on fd 2 %s after lines outside the aborting call (a chunk the forwarder read of them waits for the GIL in its hands and dies)", k.FD2.Kind)
	case k.Sigint != "" || k.stallSigint() || k.FD2.Errors != nil:
		return outside("a Fatal line on fd 2 %s with a SIGINT or refused writes (not covered)", k.FD2.Kind)
	}
	return nil
}

// draw: a Fatal abort on fd 2 a file meets a forwarder's pipe instead, a
// quarter of the time, the run cut to what the contract covers there: the
// main thread's aborting call alone (its pool, the other threads, the
// daemons, the lines outside a call and any SIGINT gone). The cut changes
// only the runs this draw picks: the older draws drew them first.
func (forwarderFatalAxis) draw(d Drawer, s *Schedule, _ *drawState) {
	k := s.Sink
	if k.Abort == nil || !k.Abort.Fatal || k.FD2.Kind != FD2File || len(k.Threads) == 0 || len(k.Threads[0].Calls) == 0 ||
		d.IntRange(0, 3, "forwarder at the fatal line?") > 0 {
		return
	}
	saved := *k
	kind := FD2Wurlitzer
	if k.Stderr.Kind == StderrOriginal && d.Bool("ipykernel's?") {
		kind = FD2IPyKernel
	}
	k.FD2 = FD2{Kind: kind,
		Capacity: pick(d, []int{4096, 8192, 16384, 65536}, "forwarder capacity"),
		Chunk:    pick(d, []int{1000, 1024, 1, 512, 4096, 65536}, "forwarder chunk")}
	calls := k.Threads[0].Calls
	last := calls[len(calls)-1]
	last.Pool = nil
	if last.Nested != nil {
		n := *last.Nested
		n.Pool = nil
		last.Nested = &n
	}
	k.Threads = []Thread{{Calls: []Call{last}}}
	k.Outside = 0
	k.DaemonThreads = DaemonThreads{}
	k.Interrupts = Interrupts{SigintIgnored: k.SigintIgnored}
	k.PythonHandler = PythonHandler{}
	if s.Validate() != nil || s.InContract() != nil {
		*k = saved
	}
}
