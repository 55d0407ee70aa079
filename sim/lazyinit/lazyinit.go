// Package lazyinit models the lazy device initialization of torch.cuda,
// torch.xpu and torch.mtia (docs/FACTS.md, "The lazy-initialization
// deadlock"): one queue-or-run state machine, shared by three backends that
// each get their own non-reentrant `_initialization_lock`, `_initialized`
// flag, thread-local `_tls.is_initializing` mark, queued calls and seed
// tracker, with the four `_lazy_call` variants of docs/SCENARIOS.md ("Matrix: lazy
// device initialization").
//
// The code being modelled is Python (torch/<backend>/__init__.py), so every
// method runs on a *sim.Thread that holds the GIL, and `with
// _initialization_lock:` is threading.Lock.acquire as CPython does it: a
// non-blocking attempt with the GIL held, and only if that fails the GIL is
// released around the blocking wait and retaken afterwards
// (Modules/_threadmodule.c acquire_timed). A thread that waits for the lock it
// already holds therefore waits without the GIL, and the wait-for graph shows
// the bare self-wait, not the GIL.
//
// What the model leaves out: bad-fork checks, `_is_compiled`, the traceback
// kept with each queued call, and DeferredCudaCallError (no callback raises).
// Native initialization (torch._C._cuda_init) always succeeds. The GIL is
// never taken away from a thread by the switch interval on its own: the
// places where CPython could switch threads are hook points (PointSwitch)
// that a test uses to hand the GIL over.
package lazyinit

import (
	"fmt"
	"sync"
	"sync/atomic"

	"logjam/failpoints"
	"logjam/sim"
	"logjam/telemetry"
)

// Callback is one callable handed to `_lazy_call`. Its ID is unique in the
// process (backend and sequence number); each run is reported as telemetry
// {"ev":"callback","id":...}, which the ledger counts.
type Callback struct {
	ID   string
	Name string
	fn   func(t *sim.Thread)
}

// Machine is one backend's module state (torch/<backend>/__init__.py).
type Machine struct {
	Backend Backend
	Variant Variant
	// Lock is `_initialization_lock`: a sim Lock, so every wait for it is
	// an edge of the wait-for graph.
	Lock *sim.Lock

	tel *telemetry.Writer

	initialized atomic.Bool   // `_initialized`
	initDone    chan struct{} // closed when `_initialized` becomes true
	tls         sync.Map      // *sim.Thread -> struct{}: `_tls.is_initializing`
	native      atomic.Bool   // torch._C._<backend>_init() has run
	seq         atomic.Int64
	generator   atomic.Int64 // the default generator's state (a seed)
	selfWaits   atomic.Int64

	// Guarded by Lock (the modelled lock): only a thread that owns
	// `_initialization_lock` touches them, and the sim Lock's handoff
	// (under the graph mutex) orders those threads for the race detector.
	queue     []*Callback // `_queued_calls`
	seedCB    *Callback   // `_lazy_seed_tracker.manual_seed_cb`
	seedAllCB *Callback   // `_lazy_seed_tracker.manual_seed_all_cb`
	callOrder []*Callback // `_lazy_seed_tracker.call_order`

	stats stats
}

// New builds a fresh module state for backend b with variant v. Its lock is
// named "<backend> _initialization_lock" in the graph g. tel may be nil (no
// telemetry, as in an in-process test).
func New(g *sim.Graph, tel *telemetry.Writer, b Backend, v Variant) *Machine {
	return &Machine{
		Backend:  b,
		Variant:  v,
		Lock:     g.NewLock(string(b) + " _initialization_lock"),
		tel:      tel,
		initDone: make(chan struct{}),
		stats:    stats{runs: map[string]int{}, superseded: map[string]bool{}},
	}
}

func (m *Machine) emit(p telemetry.Payload) { m.tel.Emit(p) }

// NewCallback wraps fn as a callable with a process-unique id.
func (m *Machine) NewCallback(name string, fn func(t *sim.Thread)) *Callback {
	return &Callback{ID: fmt.Sprintf("%s#%d", m.Backend, m.seq.Add(1)), Name: name, fn: fn}
}

// IsInitialized is is_initialized(): `_initialized` (no bad fork here).
func (m *Machine) IsInitialized() bool { return m.initialized.Load() }

// InitDone is closed once `_initialized` is true: for barriers that must be
// bounded (a select with a timeout); Graph.WaitUntil can read
// IsInitialized instead, since the flag is set while the lock is held and
// the lock's release wakes every WaitUntil.
func (m *Machine) InitDone() <-chan struct{} { return m.initDone }

// Initializing reports `getattr(_tls, "is_initializing", False)` for t.
func (m *Machine) Initializing(t *sim.Thread) bool {
	_, ok := m.tls.Load(t)
	return ok
}

// Where names a point in the lazy-init code, for PointSwitch hooks.
type Where string

// The places where CPython could switch threads that the model exposes.
const (
	CallEntry   Where = "lazy_call:entry"
	CallChecked Where = "lazy_call:checked"  // fast paths not taken, before the lock
	CallLocked  Where = "lazy_call:locked"   // holding the lock, before deciding
	CallAfter   Where = "lazy_call:released" // fixed: lock released, before run_now
	InitEntry   Where = "lazy_init:entry"
	InitChecked Where = "lazy_init:checked" // not initialized, before the lock
	InitNative  Where = "lazy_init:native"  // native init done, before the mark
	InitDrain   Where = "lazy_init:drain"   // before each queued call
	InitDrained Where = "lazy_init:drained" // drain done, before `_initialized = True`
)

func (m *Machine) sw(t *sim.Thread, w Where) { failpoints.Hit(PointSwitch, m, t, w) }

// acquire is the entry of `with _initialization_lock:`.
func (m *Machine) acquire(t *sim.Thread) {
	if m.Lock.TryAcquire(t) {
		return
	}
	self := m.Lock.HeldBy(t) // only t can change that answer
	gil := t.HoldsGIL()
	if gil {
		t.ReleaseGIL()
	}
	if self {
		m.selfWaits.Add(1)
	}
	// threading.Lock is not reentrant: for a self-wait this never returns.
	m.Lock.Acquire(t)
	if gil {
		t.AcquireGIL()
	}
}

// queueOrRunLocked is the old body of _lazy_call:
//
//	with _initialization_lock:
//	    if is_initialized(): callable()
//	    else: queue
func (m *Machine) queueOrRunLocked(t *sim.Thread, cb *Callback, kind Kind) {
	m.enterLock(t)
	if m.IsInitialized() {
		m.run(t, cb, PathUnderLock)
	} else {
		m.queueLocked(t, cb, kind)
	}
	m.release(t)
}

// enterLock is `with _initialization_lock:` as _lazy_call enters it: the
// race barrier before the lock, the acquire, the switch point inside.
func (m *Machine) enterLock(t *sim.Thread) {
	m.beforeLock(t)
	m.acquire(t)
	m.sw(t, CallLocked)
}

// SelfWaits counts threads that waited for `_initialization_lock` while
// holding it (each waits forever).
func (m *Machine) SelfWaits() int { return int(m.selfWaits.Load()) }

func (m *Machine) release(t *sim.Thread) { m.Lock.Release(t) }

// LazyCall is `_lazy_call(cb, seed=..., seed_all=...)` in the machine's
// variant. Runs on t holding the GIL.
func (m *Machine) LazyCall(t *sim.Thread, cb *Callback, kind Kind) {
	m.stats.submitted(cb)
	m.sw(t, CallEntry)
	switch m.Variant {
	case Old:
		m.queueOrRunLocked(t, cb, kind)
	case InitFast:
		if m.IsInitialized() {
			m.run(t, cb, PathInitialized)
			return
		}
		m.queueOrRunLocked(t, cb, kind)
	case NoRace:
		if m.IsInitialized() || m.Initializing(t) {
			m.run(t, cb, m.fastWhy(t))
			return
		}
		m.enterLock(t)
		m.queueLocked(t, cb, kind) // no re-check: the race the fix closes
		m.release(t)
	case Fixed:
		if m.IsInitialized() || m.Initializing(t) {
			m.run(t, cb, m.fastWhy(t))
			return
		}
		m.enterLock(t)
		runNow := m.IsInitialized()
		if !runNow {
			m.queueLocked(t, cb, kind)
		}
		m.release(t)
		m.sw(t, CallAfter)
		if runNow {
			m.run(t, cb, PathRunNow)
		}
	default:
		panic("lazyinit: unknown variant " + string(m.Variant))
	}
}

func (m *Machine) fastWhy(t *sim.Thread) string {
	if m.IsInitialized() {
		return PathInitialized
	}
	return PathInitializing
}

// beforeLock is the window the fix's run_now covers: the fast-path checks
// said "not initialized, not initializing" and the lock is not taken yet.
func (m *Machine) beforeLock(t *sim.Thread) {
	m.sw(t, CallChecked)
	failpoints.Hit(PointBeforeLock, m, t)
}

// queueLocked appends cb to `_queued_calls` or to the seed tracker; the
// caller owns the lock.
func (m *Machine) queueLocked(t *sim.Thread, cb *Callback, kind Kind) {
	switch kind {
	case Seed:
		if m.seedCB != nil {
			m.stats.supersede(m.seedCB)
		}
		m.seedCB = cb
		m.callOrder = []*Callback{m.seedAllCB, m.seedCB}
	case SeedAll:
		if m.seedAllCB != nil {
			m.stats.supersede(m.seedAllCB)
		}
		m.seedAllCB = cb
		m.callOrder = []*Callback{m.seedCB, m.seedAllCB}
	default:
		m.queue = append(m.queue, cb)
	}
	m.stats.queued.Add(1)
	m.emit(telemetry.LazyQueue{Backend: string(m.Backend), ID: cb.ID, Name: cb.Name, QueueKind: kind.String(), Thread: t.Name,
		Initialized: m.IsInitialized()})
}

// run calls cb on t (holding the GIL) and reports the run.
func (m *Machine) run(t *sim.Thread, cb *Callback, why string) {
	m.stats.ran(cb, why)
	m.emit(telemetry.Callback{Backend: string(m.Backend), ID: cb.ID, Name: cb.Name, Thread: t.Name, Variant: string(m.Variant), Path: why})
	if cb.fn != nil {
		cb.fn(t)
	}
}

// LazyInit is `_lazy_init()` (the same in every variant):
//
//	if is_initialized() or hasattr(_tls, "is_initializing"): return
//	with _initialization_lock:
//	    if is_initialized(): return          # the double-check
//	    torch._C._<backend>_init()
//	    _tls.is_initializing = True
//	    _queued_calls.extend(seed tracker calls)
//	    try: for cb in _queued_calls: cb()  # a list: appends during the loop run too
//	    finally: del _tls.is_initializing
//	    _initialized = True
func (m *Machine) LazyInit(t *sim.Thread) {
	m.sw(t, InitEntry)
	if m.IsInitialized() || m.Initializing(t) {
		return
	}
	m.sw(t, InitChecked)
	m.acquire(t)
	if m.IsInitialized() {
		m.release(t)
		return
	}
	m.native.Store(true)
	m.emit(telemetry.NativeInit{Backend: string(m.Backend), Call: "torch._C._" + string(m.Backend) + "_init", Thread: t.Name})
	m.sw(t, InitNative)
	m.tls.Store(t, struct{}{})
	for _, cb := range m.callOrder {
		if cb != nil {
			m.queue = append(m.queue, cb)
		}
	}
	for i := 0; i < len(m.queue); i++ {
		m.sw(t, InitDrain)
		m.run(t, m.queue[i], PathDrained)
	}
	m.tls.Delete(t)
	m.sw(t, InitDrained)
	m.initialized.Store(true)
	close(m.initDone)
	m.emit(telemetry.Initialized{Backend: string(m.Backend), Thread: t.Name, Drained: len(m.queue)})
	m.release(t)
}

// Init is torch.<backend>.init().
func (m *Machine) Init(t *sim.Thread) { m.LazyInit(t) }
