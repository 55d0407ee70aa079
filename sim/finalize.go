package sim

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"logjam/daemon"
	"logjam/signals"
	"logjam/telemetry"
)

// finalization is the interpreter's exit after the atexit hooks: the
// finalizing thread, the daemon rule, the teardown of module objects, and
// the threads that met their fate.
type finalization struct {
	by       atomic.Pointer[Thread] // the finalizing thread, once started
	rule     daemon.Rule            // set before by is published
	teardown []func(t *Thread)      // guarded by Interp.mu
	promises []promise              // guarded by Interp.mu
	settled  map[*Thread]bool       // guarded by the graph's mutex
}

// promise is a state of the graph a scenario promises holds when
// finalization starts, once the threads it names have settled.
type promise struct {
	what    string
	holds   func() bool // evaluated with the graph's mutex held
	settles []*Thread
}

// BrokenPromise is a finalization refused because a state the scenario
// promised does not hold: the scenario is wrong, not the policy under test.
type BrokenPromise struct {
	What       string   // the promised state
	GILWaiters []string // who was queued for the GIL when finalization would have started
	Elsewhere  []string // threads waiting for something else then ("daemon-1 waits for ...")
}

func (e *BrokenPromise) Error() string {
	s := fmt.Sprintf("scenario error: finalization refused: the scenario promised %s, but it does not hold (queued for the GIL: [%s])",
		e.What, strings.Join(e.GILWaiters, ", "))
	if len(e.Elsewhere) > 0 {
		s += "; " + strings.Join(e.Elsewhere, "; ")
	}
	return s
}

// PromiseAtFinalization registers a state the scenario promises holds when
// finalization starts; holds is evaluated with the graph's mutex held, at
// the moment finalization would start, once every thread of settles has
// settled (Thread.SettledLocked: a barrier, so that what an exit hook or a
// reader outside the process did last decides nothing). Shutdown refuses to
// finalize when one does not hold.
func (in *Interp) PromiseAtFinalization(what string, holds func() bool, settles ...*Thread) {
	in.mu.Lock()
	in.fin.promises = append(in.fin.promises, promise{what, holds, settles})
	in.mu.Unlock()
}

// AtTeardown registers fn to run when finalization tears down the module
// objects (module dicts cleared, the last collection): after the daemon
// threads met their fate, on the finalizing thread, GIL held. A backend's
// destructor runs here.
func (in *Interp) AtTeardown(fn func(t *Thread)) {
	in.mu.Lock()
	in.fin.teardown = append(in.fin.teardown, fn)
	in.mu.Unlock()
}

// Finalizing reports whether finalization has started.
func (in *Interp) Finalizing() bool { return in.fin.by.Load() != nil }

// mustExit is _PyThreadState_MustExit: finalization has started and t is
// not the thread that runs it.
func (in *Interp) mustExit(t *Thread) bool {
	by := in.fin.by.Load()
	return by != nil && by != t
}

// finalize starts finalization on main (GIL held): from now on any other
// thread that asks for the GIL meets the rule's fate. The threads already
// queued for the GIL are woken, as CPython's finalizing thread lets them take
// it and exit: main hands the GIL over and waits until each has met its fate
// (ended, hung, or crashed the process), then retakes it and tears down the
// module objects. Daemon threads are never joined.
//
// A promise registered with PromiseAtFinalization that does not hold at
// that moment stops it before it starts: finalize returns a *BrokenPromise.
func (in *Interp) finalize(main *Thread) error {
	in.fin.rule = daemon.For(string(in.Platform), in.Python.Hex())
	in.mu.Lock()
	promises := slices.Clone(in.fin.promises)
	in.mu.Unlock()
	var settles []*Thread
	for _, p := range promises {
		settles = append(settles, p.settles...)
	}
	in.G.ParkUntil(main, func() bool {
		for _, t := range settles {
			if !t.SettledLocked() {
				return false
			}
		}
		return true
	})
	in.G.mu.Lock()
	waiting := slices.Clone(in.GIL.waiters)
	names := make([]string, len(waiting))
	for i, t := range waiting {
		names[i] = t.Name
	}
	for _, p := range promises {
		if !p.holds() {
			var elsewhere []string
			for _, t := range in.G.threads {
				if t != main && !t.ended && t.waiting != nil && t.waiting != Resource(in.GIL) {
					elsewhere = append(elsewhere, t.Name+" waits for "+t.waiting.ResourceName())
				}
			}
			in.G.mu.Unlock()
			return &BrokenPromise{What: p.what, GILWaiters: names, Elsewhere: elsewhere}
		}
	}
	in.fin.settled = map[*Thread]bool{}
	in.fin.by.Store(main)
	in.G.mu.Unlock()
	p := in.fin.rule
	in.Tel.Emit(telemetry.Finalize{Thread: main.Name, Rule: telemetry.DaemonRule{Platform: p.Platform, Python: p.Python, Fate: string(p.Fate), Why: p.Why}, GILWaiters: names})
	if len(waiting) > 0 {
		main.ReleaseGIL()
		in.G.WaitUntilAs(main, "every thread queued for the GIL meets its fate", func() bool {
			for _, t := range waiting {
				if !t.ended && !in.fin.settled[t] {
					return false
				}
			}
			return true
		})
		main.AcquireGIL()
	}
	// flush_std_files: once the other threads met their fate (a thread
	// that met it inside sys.stderr's write keeps its lock: enter), before
	// the modules are torn down.
	if o, ok := in.original.(*OriginalStream); ok {
		_ = o.Flush(main)
	}
	in.mu.Lock()
	teardown := slices.Clone(in.fin.teardown)
	in.mu.Unlock()
	for _, fn := range teardown {
		fn(main)
	}
	return nil
}

// afterFinalization is what t suffers when it asks for the GIL after
// finalization started (it does not hold it). It never returns.
func (in *Interp) afterFinalization(t *Thread) {
	p := in.fin.rule
	in.Tel.Emit(telemetry.DaemonFate{Thread: t.Name, Daemon: t.Daemon, Fate: string(p.Fate), Why: p.Why,
		Holds: in.heldNames(t)})
	switch p.Fate {
	case daemon.Unwind:
		panic(daemon.ForcedUnwind{Thread: t.Name})
	case daemon.Hang:
		// while (1) pause(); with the GIL released. It waits for an
		// interpreter the finalizing thread never gives back: a thread that
		// then waits for a lock this one holds closes a cycle.
		in.G.mu.Lock()
		t.waiting = hungAfterFinalization{in}
		in.fin.settled[t] = true
		in.G.changedLocked()
		in.G.mu.Unlock()
		select {}
	default: // daemon.ExitWithoutUnwind
		// The thread is gone; its frames never ran their destructors, so the
		// locks it holds stay held.
		in.endThread(t)
		select {}
	}
}

func (in *Interp) heldNames(t *Thread) []string {
	in.G.mu.Lock()
	defer in.G.mu.Unlock()
	return t.heldNamesLocked()
}

// hungAfterFinalization is what a hung thread waits for: the interpreter,
// which the finalizing thread never hands back.
type hungAfterFinalization struct{ in *Interp }

func (r hungAfterFinalization) ResourceName() string {
	return "the GIL after finalization (hung forever by PyThread_hang_thread)"
}

func (r hungAfterFinalization) holders() []*Thread {
	if by := r.in.fin.by.Load(); by != nil {
		return []*Thread{by}
	}
	return nil
}

// threadTop is a thread's start routine as the unwinder sees it: a forced
// unwind that reaches it has passed every frame of the thread, and
// pthread_exit completes: the thread ends. Use it as `defer in.threadTop(t)`.
func (in *Interp) threadTop(t *Thread) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(daemon.ForcedUnwind); !ok {
		panic(r)
	}
	in.Tel.Emit(telemetry.DaemonFate{Thread: t.Name, Fate: string(daemon.Unwind),
		Why: "the forced unwind reached the thread's start routine: pthread_exit completed", Holds: in.heldNames(t)})
}

// unwindFrames describes C++ frames (innermost first) that a forced unwind
// passes on its way up; use it as `defer unwindFrames(t, frames)` in the Go
// function that models them. A frame that ends the process does it here,
// with a real signal; otherwise the unwind goes on.
func unwindFrames(t *Thread, frames []daemon.Frame) {
	r := recover()
	if r == nil {
		return
	}
	u, ok := r.(daemon.ForcedUnwind)
	if !ok {
		panic(r)
	}
	end, at, stop := daemon.UnwindThrough(frames)
	if !stop {
		panic(u)
	}
	t.in.Tel.Emit(telemetry.DaemonFate{Thread: t.Name, Fate: string(daemon.Unwind), Frame: at.Name,
		FrameKind: at.Kind.String(), Signal: signals.Name(end.Signal), Why: end.Why})
	if end.Message != "" {
		// __libc_fatal writes straight to fd 2 (no stdio lock, no GIL): a
		// write(2) the model sees, so a stalled reader's observer sees it
		// wait for room. A raw write left a stalled terminal full for good,
		// or not, as the reader had gone (pinned by suites/random's entry
		// "seed 5008321: buffered CRASH").
		t.in.fd2.WriteAll(t, []byte(end.Message))
	}
	signals.DieBy(end.Signal)
}

// Destroy is the backend's destructor, run when finalization tears down the
// module that owns it (register it with AtTeardown): it takes the workspace
// lock to free the workspace, holding the GIL.
func (b *Backend) Destroy(t *Thread) {
	b.L.Acquire(t)
	b.L.Release(t)
}

// fatalError is Py_FatalError on the finalizing thread (_Py_FatalErrorFormat:
// the message straight to fd 2, then abort()) for a wait on lock that can
// never end. It never returns.
func (in *Interp) fatalError(t *Thread, fn, msg string, lock *Lock) {
	in.G.mu.Lock()
	owner := "nobody"
	if lock.owner != nil {
		owner = lock.owner.Name
	}
	in.G.mu.Unlock()
	text := "Fatal Python error: " + fn + ": " + msg + "\nPython runtime state: finalizing\n\n"
	in.Tel.Emit(telemetry.Abort{Why: strings.TrimSpace(text) + " (" + lock.name + " is held by " + owner + ")"})
	in.fd2.WriteAll(t, []byte(text)) // a write(2) the model sees (unwindFrames)
	signals.DieBy(syscall.SIGABRT)
}
