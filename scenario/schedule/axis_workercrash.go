package schedule

import (
	"fmt"

	"logjam/scenario"
	"logjam/verdict"
)

// WorkerCrash is a runtime's crash handler (row F10's mechanism: glog's or
// absl's failure signal handler) run on a native worker of a call's pool
// (a partition of the delegate's work that faults): while worker Worker
// of the main thread's call Call handles its At-th line (1: the first),
// the handler logs a Fatal line through the sink, once every other thread
// waits or has ended, and the runtime aborts. The worker holds no GIL; its
// caller holds it, waiting for the pool (std::thread::join).
type WorkerCrash struct {
	Call   int `json:"call"`
	Worker int `json:"worker"`
	At     int `json:"at"`
}

// WorkerCrashPart is a schedule's crash on a worker (embedded in Sink;
// nil: none).
type WorkerCrashPart struct {
	WorkerCrash *WorkerCrash `json:"worker_crash,omitempty"`
}

// workerCrashAxis is Sink.WorkerCrash.
type workerCrashAxis struct{ noAxisPart }

func (workerCrashAxis) Name() string { return "worker-crash" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a workerCrashAxis) Draws() []DrawAt { return []DrawAt{{24, a.draw}} }

func (workerCrashAxis) Parts(k *Sink) []any { return []any{&k.WorkerCrashPart} }

// Validate: the crash interrupts a line one of the main thread's pools
// logs; a run has one ending and one crash handler.
func (workerCrashAxis) Validate(k *Sink) error {
	w := k.WorkerCrash
	switch {
	case w == nil:
	case w.Call < 0 || w.Call >= len(k.Threads[0].Calls) || k.Threads[0].Calls[w.Call].Pool == nil:
		return fmt.Errorf("worker_crash call %d (accepted: a call of the main thread with a pool)", w.Call)
	case w.Worker < 0 || w.Worker >= k.Threads[0].Calls[w.Call].Pool.Workers:
		return fmt.Errorf("worker_crash worker %d (accepted: 0 to the pool's workers - 1)", w.Worker)
	case w.At < 1 || w.At > k.Threads[0].Calls[w.Call].Pool.Lines:
		return fmt.Errorf("worker_crash at %d (accepted: 1 to the pool's lines)", w.At)
	case k.Abort != nil || k.Crash != nil:
		return fmt.Errorf("worker_crash with an abort or a crash (a run has one ending)")
	}
	return nil
}

// InContract: what a crash handler's Fatal line on a worker may meet and
// still lose nothing a correct sink could save (docs/CONTRACT.md, "A crash
// handler's Fatal line"): one Python thread (another's lines kept in its
// call die with the process) and one worker in the pool (a line another
// worker is handing to the sink dies in its hands), sys.stderr the original (lines kept for a
// replaced one die with it), fd 2 a file, pipe or terminal neither stalled
// nor drained by a forwarder (which needs the GIL the caller holds), no
// Ctrl-C, and nothing after the crash that the run never reaches (the
// daemons, the fork).
func (workerCrashAxis) InContract(s Schedule) error {
	k := s.Sink
	if k.WorkerCrash == nil {
		return nil
	}
	switch {
	case len(k.Threads) > 1:
		return outside("a crash on a worker with other Python threads (what they kept in their calls dies with it)")
	case k.Threads[0].Calls[k.WorkerCrash.Call].Pool.Workers > 1:
		return outside("a crash on a worker of a pool of several (a line another worker is handing to the sink, waiting for a lock the handler's thread holds, dies with it)")
	case k.Stderr.Kind != StderrOriginal:
		return outside("a crash on a worker with sys.stderr replaced (what is kept for it dies with it)")
	case k.FD2.StallMs > 0 || len(k.FD2.Stalls) > 0 || k.FD2.forwarded():
		return outside("a crash on a worker with fd 2 stalled or a forwarder's pipe (what is kept, or in the forwarder's hands, dies)")
	case k.Sigint != "":
		return outside("a crash on a worker with a Ctrl-C in the run")
	case k.Daemons > 0 || k.Fork != nil:
		return outside("a crash on a worker with daemons or a fork (the run never reaches them)")
	}
	return nil
}

// Arrange: the run dies in the handler.
func (workerCrashAxis) Arrange(k *Sink, c *scenario.Contract) {
	if k.WorkerCrash != nil {
		c.Ends = scenario.EndsAbort
	}
}

func (workerCrashAxis) Faults(k *Sink) int { return b2i(k.WorkerCrash != nil) }

func (workerCrashAxis) Steps(s Schedule) []Step {
	w := s.Sink.WorkerCrash
	if w == nil {
		return nil
	}
	return []Step{
		change(PhasePart, "no worker crash", func(c *Schedule) { c.Sink.WorkerCrash = nil }),
		count(PhaseDetail, "worker crash at", w.At, func(c *Schedule, n int) { c.Sink.WorkerCrash.At = max(1, n) }),
		count(PhaseDetail, "worker crash worker", w.Worker, func(c *Schedule, n int) { c.Sink.WorkerCrash.Worker = n }),
	}
}

func (workerCrashAxis) Words(s Schedule) []string {
	if w := s.Sink.WorkerCrash; w != nil {
		return []string{fmt.Sprintf("a crash handler's Fatal line on worker %d of main's call %d, at its line %d", w.Worker, w.Call, w.At)}
	}
	return nil
}

func (workerCrashAxis) FailureWords(s Schedule, v verdict.Verdict) []string {
	if s.Sink.WorkerCrash != nil && v != verdict.OK {
		return []string{"worker crash"}
	}
	return nil
}

// draw: a run with no abort or crash whose main thread has a call with a
// pool crashes on its worker one time in two, the run cut to what the
// contract covers there (the main thread alone, the pool one worker, no
// Ctrl-C, no daemons or fork); a run the cut cannot bring inside the
// contract keeps its draw.
func (workerCrashAxis) draw(d Drawer, s *Schedule, _ *drawState) {
	k := s.Sink
	if k.Abort != nil || k.Crash != nil || len(k.Threads) == 0 {
		return
	}
	call := -1
	for j, c := range k.Threads[0].Calls {
		if c.Pool != nil && c.Pool.Lines > 0 {
			call = j
			break
		}
	}
	if call < 0 || !d.Bool("worker crash?") {
		return
	}
	p := k.Threads[0].Calls[call].Pool
	c, err := Decode(string(s.JSON()))
	if err != nil {
		return
	}
	kc := c.Sink
	kc.WorkerCrash = &WorkerCrash{Call: call, At: d.IntRange(1, p.Lines, "worker crash at")}
	kc.Threads = kc.Threads[:1]
	kc.Threads[0].Calls[call].Pool.Workers = 1
	kc.Interrupts = Interrupts{SigintIgnored: kc.SigintIgnored}
	kc.PythonHandler = PythonHandler{}
	kc.DaemonThreads, kc.Fork = DaemonThreads{}, nil
	for i := range kc.Threads[0].Calls {
		kc.Threads[0].Calls[i].WaitFor = 0 // no other thread to wait for
	}
	if c.Validate() == nil && c.InContract() == nil {
		*s = c
	}
}
