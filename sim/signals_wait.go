package sim

import "sync"

// SignalArrival is what a thread waiting for a signal waits for. Nothing in
// the process holds it (it comes from outside), so it never closes a cycle.
type SignalArrival struct{}

// ResourceName implements Resource.
func (SignalArrival) ResourceName() string { return "a SIGINT from outside the process" }
func (SignalArrival) holders() []*Thread   { return nil }

// tripWatch counts the trips of one Signals (a real SIGINT reaching the
// bridge, or PyErr_SetInterrupt), so a program can wait for a signal on a
// condition instead of sleeping.
type tripWatch struct {
	once sync.Once
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

var tripWatches sync.Map // *Signals -> *tripWatch

// watch returns the trip counter of s, chaining it after s's wake-up the
// first time. Call it (through Trips) before asking for a signal: a trip
// before the chain exists is not counted.
func (s *Signals) watch() *tripWatch {
	fresh := &tripWatch{}
	fresh.cond = sync.NewCond(&fresh.mu)
	v, _ := tripWatches.LoadOrStore(s, fresh)
	w := v.(*tripWatch)
	w.once.Do(func() {
		s.mu.Lock()
		prev := s.onTrip
		s.onTrip = func() {
			if prev != nil {
				prev()
			}
			w.mu.Lock()
			w.n++
			w.cond.Broadcast()
			w.mu.Unlock()
		}
		s.mu.Unlock()
	})
	return w
}

// Trips is how many times SIGINT tripped the pending flag since the counter
// was first read. Read it before asking for a signal, then WaitTrips for
// one more.
func (s *Signals) Trips() int {
	w := s.watch()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// WaitTrips blocks t until Trips() >= n, shown in the wait-for graph as a
// wait for a SIGINT. It leaves the GIL as it is: a binding call waits
// holding it (the bindings never release it); a Python-level wait releases
// it first.
func (s *Signals) WaitTrips(t *Thread, n int) {
	w := s.watch()
	t.in.G.waitOn(t, SignalArrival{}, func() {
		w.mu.Lock()
		for w.n < n {
			w.cond.Wait()
		}
		w.mu.Unlock()
	})
}

// AwaitTrips blocks the calling goroutine (an observer, not a Python
// thread) until Trips() >= n.
func (s *Signals) AwaitTrips(n int) {
	w := s.watch()
	w.mu.Lock()
	for w.n < n {
		w.cond.Wait()
	}
	w.mu.Unlock()
}

// WaitUntilWaiting blocks until t waits for r (a lock, room on fd 2, a
// signal): an observer outside the script uses it to act at the moment a
// write blocks, never after a guessed delay.
func (g *Graph) WaitUntilWaiting(t *Thread, r Resource) {
	g.WaitUntil(func() bool { return t.waiting == r })
}
