package sim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"logjam/telemetry"
)

// Resource is anything a thread can wait for. Holders are the threads whose
// progress releases it: the owner of a lock, the drainer of a pipe, the
// thread a join waits for. A resource with no in-process holder (a pipe the
// parent drains, an event) cannot close a cycle.
type Resource interface {
	ResourceName() string
	holders() []*Thread // called with the graph's mutex held
}

// Graph is the wait-for graph of one process. One mutex guards every
// instrumented resource, so the graph is always a consistent snapshot.
type Graph struct {
	mu       sync.Mutex
	cond     *sync.Cond // broadcast on every change of ownership or waiting
	threads  []*Thread
	locks    []*Lock
	tel      *telemetry.Writer
	reported map[string]bool
	forks    int // os.fork() calls so far (Runtime.Fork)
	onCycle  func(Cycle)
	// abandoned reports whether the process's exit no longer waits for t
	// (a daemon thread once finalization has started); nil: none is.
	abandoned func(t *Thread) bool
}

// Edge is one thread of a cycle: what it holds and what it waits for.
type Edge = telemetry.Edge

// Cycle is a closed chain of waits.
type Cycle struct {
	Edges []Edge `json:"edges"`
	Text  string `json:"text"`
}

func newGraph(tel *telemetry.Writer) *Graph {
	g := &Graph{tel: tel, reported: map[string]bool{}}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// changedLocked wakes every waiter and looks for a newly formed cycle.
// Called with g.mu held after any change.
func (g *Graph) changedLocked() {
	g.cond.Broadcast()
	for _, t := range g.threads {
		if t.waiting == nil {
			continue
		}
		if c, ok := g.cycleFromLocked(t); ok {
			if g.abandonedLocked(t) {
				// Only threads the exit does not wait for: they never run
				// again, and the process goes on to its end (docs/TRUST.md,
				// "A cycle of daemon threads at exit").
				continue
			}
			key := c.key()
			if g.reported[key] {
				continue
			}
			g.reported[key] = true
			g.tel.Emit(telemetry.Cycle{Text: c.Text, Edges: c.Edges})
			if g.onCycle != nil {
				g.onCycle(c)
			}
		}
	}
}

func (c Cycle) key() string {
	names := make([]string, len(c.Edges))
	for i, e := range c.Edges {
		names[i] = e.Thread + ">" + e.Waits
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

// cycleFromLocked follows waits from t; it reports a cycle only when the
// chain comes back to t, so each cycle is found from each of its members
// and reported once.
func (g *Graph) cycleFromLocked(start *Thread) (Cycle, bool) {
	if !closesLocked(start) {
		return Cycle{}, false
	}
	var edges []Edge
	seen := map[*Thread]bool{}
	cur := start
	for {
		if seen[cur] || cur.waiting == nil {
			return Cycle{}, false
		}
		seen[cur] = true
		hs := cur.waiting.holders()
		if len(hs) == 0 {
			return Cycle{}, false
		}
		next := hs[0]
		edges = append(edges, Edge{Thread: cur.Name, Holds: cur.heldNamesLocked(), Waits: cur.waiting.ResourceName(), HeldBy: next.Name})
		if next == start {
			return Cycle{Edges: edges, Text: describe(edges)}, true
		}
		if next.ended {
			// An owner that ended without releasing (a thread that ended
			// without unwinding) never will: the wait is as final as a cycle.
			return Cycle{Edges: edges, Text: describe(edges) + "; thread " + next.Name + " has ended without releasing it"}, true
		}
		cur = next
	}
}

// closesLocked is cycleFromLocked's walk without the names: whether the
// chain of waits from start comes back to it (or ends at a thread that
// ended). Most changes of the graph form no cycle, and naming every wait
// (ResourceName, the locks held) on each change was a tenth of a short
// child's CPU.
func closesLocked(start *Thread) bool {
	seen := make([]*Thread, 0, 8)
	for cur := start; ; {
		if cur.waiting == nil || slices.Contains(seen, cur) {
			return false
		}
		seen = append(seen, cur)
		hs := cur.waiting.holders()
		if len(hs) == 0 {
			return false
		}
		next := hs[0]
		if next == start || next.ended {
			return true
		}
		cur = next
	}
}

// abandonedLocked reports whether every thread waiting in the chain from
// start is one the exit does not wait for.
func (g *Graph) abandonedLocked(start *Thread) bool {
	if g.abandoned == nil {
		return false
	}
	seen := make([]*Thread, 0, 8)
	for cur := start; cur != nil && cur.waiting != nil && !slices.Contains(seen, cur); {
		if !g.abandoned(cur) {
			return false
		}
		seen = append(seen, cur)
		hs := cur.waiting.holders()
		if len(hs) == 0 || hs[0].ended {
			break
		}
		cur = hs[0]
	}
	return true
}

func describe(edges []Edge) string {
	parts := make([]string, len(edges))
	for i, e := range edges {
		holds := "nothing"
		if len(e.Holds) > 0 {
			holds = strings.Join(e.Holds, " and ")
		}
		rel := "held by"
		if strings.HasPrefix(e.Waits, "room on fd 2") {
			rel = "drained by"
		}
		if e.HeldBy == e.Thread {
			parts[i] = fmt.Sprintf("thread %s holds %s and waits for %s, which it holds itself", e.Thread, holds, e.Waits)
			continue
		}
		parts[i] = fmt.Sprintf("thread %s holds %s and waits for %s (%s %s)", e.Thread, holds, e.Waits, rel, e.HeldBy)
	}
	return "deadlock: " + strings.Join(parts, "; ")
}

// WaitUntil blocks until cond (evaluated with the graph's mutex held) is
// true. Barriers use it to wait for a state of the graph, never for time.
func (g *Graph) WaitUntil(cond func() bool) {
	g.mu.Lock()
	for !cond() {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

// Snapshot is the lock table: every thread, what it holds and waits for.
type Snapshot = telemetry.LockTable

// ThreadState is one row of the lock table.
type ThreadState = telemetry.ThreadState

// Snapshot returns the lock table.
func (g *Graph) Snapshot() Snapshot {
	g.mu.Lock()
	defer g.mu.Unlock()
	var s Snapshot
	for _, t := range g.threads {
		st := ThreadState{Name: t.Name, Daemon: t.Daemon, Holds: t.heldNamesLocked(), Ended: t.ended}
		if t.waiting != nil {
			st.Waits = t.waiting.ResourceName()
			for _, h := range t.waiting.holders() {
				st.HeldBy = append(st.HeldBy, h.Name)
			}
		}
		s.Threads = append(s.Threads, st)
	}
	return s
}

// Lock is the one instrumented lock type: the GIL, backend locks, the C stdio
// lock and the lazy-init lock. Non-reentrant; ownership passes to the first
// waiter on release (FIFO), which makes handoffs deterministic.
type Lock struct {
	g       *Graph
	name    string
	owner   *Thread
	waiters []*Thread
}

// NewLock registers a lock in the graph.
func (g *Graph) NewLock(name string) *Lock {
	l := &Lock{g: g, name: name}
	g.mu.Lock()
	g.locks = append(g.locks, l)
	g.mu.Unlock()
	return l
}

// ResourceName implements Resource.
func (l *Lock) ResourceName() string { return l.name }

func (l *Lock) holders() []*Thread {
	if l.owner == nil {
		return nil
	}
	return []*Thread{l.owner}
}

// Acquire takes the lock for t, waiting (forever, if it must) as the real
// lock would. A thread that already owns it waits for itself.
func (l *Lock) Acquire(t *Thread) {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.owner == nil && len(l.waiters) == 0 {
		l.owner = t
		t.held = append(t.held, l)
		return
	}
	l.waiters = append(l.waiters, t)
	l.awaitTurnLocked(t)
}

// awaitTurnLocked waits, t queued among the waiters, until t owns the lock.
// A thread that owns the lock and asks again waits for itself, forever,
// as a non-reentrant lock does: it stays among the waiters. Graph mutex held.
func (l *Lock) awaitTurnLocked(t *Thread) {
	g := l.g
	t.waiting = l
	g.changedLocked()
	for l.owner != t || slices.Contains(l.waiters, t) {
		g.cond.Wait()
	}
	t.waiting = nil
}

// TryAcquire takes the lock only if it is free.
func (l *Lock) TryAcquire(t *Thread) bool {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.owner != nil || len(l.waiters) > 0 {
		return false
	}
	l.owner = t
	t.held = append(t.held, l)
	return true
}

// Release hands the lock to the first waiter, if any.
func (l *Lock) Release(t *Thread) {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	l.releaseLocked(t)
}

// releaseLocked is Release with the graph mutex held: the lock goes to its
// first waiter, if any.
func (l *Lock) releaseLocked(t *Thread) {
	g := l.g
	if l.owner != t {
		panic(fmt.Sprintf("sim: thread %s releases %s owned by %v", t.Name, l.name, l.owner))
	}
	t.dropHeldLocked(l)
	l.owner = nil
	if len(l.waiters) > 0 {
		next := l.waiters[0]
		l.waiters = l.waiters[1:]
		l.owner = next
		next.held = append(next.held, l)
		next.waiting = nil // it owns the lock now, even before it wakes
	}
	g.changedLocked()
}

// switchTo hands the lock t owns to its first waiter and queues t behind
// the others in the same step (Thread.SwitchGIL), then waits for its turn;
// with no waiter, t keeps it.
func (l *Lock) switchTo(t *Thread) {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.owner == t && len(l.waiters) == 0 {
		return
	}
	l.releaseLocked(t)
	l.waiters = append(l.waiters, t)
	l.awaitTurnLocked(t)
}

// HeldBy reports whether t owns the lock.
func (l *Lock) HeldBy(t *Thread) bool {
	l.g.mu.Lock()
	defer l.g.mu.Unlock()
	return l.owner == t
}

// WaitersLocked is for WaitUntil conditions (graph mutex held).
func (l *Lock) WaitersLocked() []*Thread { return l.waiters }

// OwnerLocked is for WaitUntil conditions (graph mutex held).
func (l *Lock) OwnerLocked() *Thread { return l.owner }

// waitOn marks t as waiting for r while fn runs (fn blocks outside the
// graph: in a syscall, on a channel). The edge exists only while fn runs.
func (g *Graph) waitOn(t *Thread, r Resource, fn func()) { g.waitOnMode(t, r, false, fn) }

// waitOnMode is waitOn, saying whether a signal can end the wait early.
func (g *Graph) waitOnMode(t *Thread, r Resource, interruptible bool, fn func()) {
	g.mu.Lock()
	t.waiting = r
	t.waits++
	t.interruptible = interruptible
	g.changedLocked()
	g.mu.Unlock()
	fn()
	g.mu.Lock()
	t.waiting = nil
	t.interruptible = false
	g.changedLocked()
	g.mu.Unlock()
}
