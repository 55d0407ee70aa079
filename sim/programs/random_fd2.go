package programs

import (
	"logjam/scenario/schedule"
	"logjam/sim"
)

func init() {
	playAxis("fd2", func(k *schedule.Sink) axisPlay {
		if k.FD2.Kind != schedule.FD2IPyKernel && k.FD2.Kind != schedule.FD2Wurlitzer {
			return nil // the parent arranges a file, a pipe or a pty
		}
		return &fd2Play{}
	})
}

// fd2Play is fd 2 drained in the child (ipykernel's or wurlitzer's
// forwarder): the capture starts before the threads do and is left as the
// script ends (the with-block's exit), before the daemons and the exit.
type fd2Play struct {
	noPlay
	capture *sim.FD2Capture
}

func (f *fd2Play) beforeThreads(p *sinkPlayer) {
	k := p.s
	style := sim.IPyKernel
	if k.FD2.Kind == schedule.FD2Wurlitzer {
		style = sim.Wurlitzer
	}
	style.Chunk, style.Capacity = k.FD2.Chunk, k.FD2.Capacity
	f.capture = captureFD2(p.e, style)
}

func (f *fd2Play) scriptEnds(p *sinkPlayer) *sim.PyErr {
	must(f.capture.Close(p.e.Main))
	return nil
}
