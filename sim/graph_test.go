package sim

import (
	"strings"
	"testing"
	"time"
)

// A graph with n threads and a channel of the cycles it reports. Threads
// left deadlocked by a test stay blocked in this process: that is the point
// (the detector only reports), and they hold nothing the next test uses.
func testGraph(names ...string) (*Graph, []*Thread, chan Cycle) {
	in := newInterp(nil, Linux, Version{3, 12, 0})
	cycles := make(chan Cycle, 8)
	in.G.onCycle = func(c Cycle) { cycles <- c }
	var ts []*Thread
	for _, n := range names {
		ts = append(ts, in.newThread(n, false, false))
	}
	return in.G, ts, cycles
}

func waitCycle(t *testing.T, cycles chan Cycle) Cycle {
	t.Helper()
	select {
	case c := <-cycles:
		return c
	case <-time.After(10 * time.Second): // a bound on a missing report, not a timing claim
		t.Fatal("no cycle was reported")
	}
	return Cycle{}
}

func TestTwoThreadsInOppositeOrderFormANamedCycle(t *testing.T) {
	g, ts, cycles := testGraph("A", "B")
	x, y := g.NewLock("lock X"), g.NewLock("lock Y")
	a, b := ts[0], ts[1]
	x.Acquire(a)
	y.Acquire(b)
	go x.Acquire(b)
	go y.Acquire(a)
	c := waitCycle(t, cycles)
	for _, want := range []string{"thread A holds lock X and waits for lock Y (held by B)", "thread B holds lock Y and waits for lock X (held by A)"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("cycle %q does not say %q", c.Text, want)
		}
	}
}

func TestAThreadWaitingForItsOwnLockIsASelfCycle(t *testing.T) {
	g, ts, cycles := testGraph("A")
	l := g.NewLock("_initialization_lock")
	l.Acquire(ts[0])
	returned := make(chan struct{})
	go func() { l.Acquire(ts[0]); close(returned) }()
	c := waitCycle(t, cycles)
	select {
	case <-returned:
		t.Fatal("a second Acquire by the owner returned: a non-reentrant lock must wait for itself")
	case <-time.After(50 * time.Millisecond): // a window for a wrong return, not a timing claim
	}
	if !strings.Contains(c.Text, "thread A holds _initialization_lock and waits for _initialization_lock, which it holds itself") {
		t.Errorf("got %q", c.Text)
	}
}

// A handoff to a queued waiter must not look like that waiter waiting for
// a lock it holds (the first version of the graph reported exactly that).
func TestHandoffIsNotASelfCycle(t *testing.T) {
	g, ts, cycles := testGraph("A", "B", "C")
	l := g.NewLock("the GIL")
	a, b, c := ts[0], ts[1], ts[2]
	l.Acquire(a)
	done := make(chan struct{})
	go func() { l.Acquire(b); l.Release(b); close(done) }()
	go func() { l.Acquire(c); l.Release(c) }()
	g.WaitUntil(func() bool { return len(l.waiters) == 2 })
	l.Release(a)
	<-done
	g.WaitUntil(func() bool { return l.owner == nil })
	select {
	case cy := <-cycles:
		t.Fatalf("false cycle: %s", cy.Text)
	default:
	}
}

func TestOwnershipPassesInArrivalOrder(t *testing.T) {
	g, ts, _ := testGraph("A", "B", "C")
	l := g.NewLock("the GIL")
	l.Acquire(ts[0])
	order := make(chan string, 2)
	for _, th := range ts[1:] {
		go func() { l.Acquire(th); order <- th.Name; l.Release(th) }()
		g.WaitUntil(func() bool { return len(l.waiters) > 0 && l.waiters[len(l.waiters)-1] == th })
	}
	l.Release(ts[0])
	if first, second := <-order, <-order; first != "B" || second != "C" {
		t.Fatalf("handoff order %s, %s; want B, C", first, second)
	}
}

// Room on a pipe drained by a thread is held by that thread: a writer with
// the GIL blocked on room, and the drainer waiting for the GIL, is a cycle.
func TestPipeRoomClosesACycleThroughItsDrainer(t *testing.T) {
	g, ts, cycles := testGraph("MainThread", "forwarder")
	gil := g.NewLock("the GIL")
	main, fwd := ts[0], ts[1]
	room := &PipeRoom{kind: FDPipe, drainer: fwd}
	gil.Acquire(main)
	go g.waitOn(main, room, func() { select {} })
	go gil.Acquire(fwd)
	c := waitCycle(t, cycles)
	if !strings.Contains(c.Text, "waits for room on fd 2 (a pipe) (drained by forwarder)") {
		t.Errorf("got %q", c.Text)
	}
}

// An event has no holder: waiting for it never closes a cycle.
func TestEventsNeverCloseACycle(t *testing.T) {
	g, ts, cycles := testGraph("A")
	e := &Event{name: "never set", ch: make(chan struct{})}
	go g.waitOn(ts[0], e, func() { <-e.ch })
	g.WaitUntil(func() bool { return ts[0].waiting != nil })
	select {
	case cy := <-cycles:
		t.Fatalf("false cycle: %s", cy.Text)
	default:
	}
}

// A lock whose owner has ended without releasing it (a daemon thread ended
// without unwinding, T6) is never released: waiting for it is reported as
// final, naming the ended owner; while the owner lives it is no cycle.
func TestALockWhoseOwnerEndedClosesTheWait(t *testing.T) {
	g, ts, cycles := testGraph("worker", "MainThread")
	l := g.NewLock("lock L")
	worker, main := ts[0], ts[1]
	l.Acquire(worker)
	go l.Acquire(main)
	g.WaitUntilWaiting(main, l)
	select {
	case cy := <-cycles:
		t.Fatalf("a wait for a live owner reported as a cycle: %s", cy.Text)
	default:
	}
	g.mu.Lock()
	worker.ended = true
	g.changedLocked()
	g.mu.Unlock()
	c := waitCycle(t, cycles)
	want := "thread MainThread holds nothing and waits for lock L (held by worker); thread worker has ended without releasing it"
	if !strings.Contains(c.Text, want) {
		t.Errorf("got %q, want it to say %q", c.Text, want)
	}
}

// docs/TRUST.md, "A cycle of daemon threads at exit": once finalization
// has started, a daemon thread's wait for a lock another daemon took with
// it when it ended stops nothing (the exit does not wait for daemons):
// not a cycle. The same wait of a thread the exit waits for is one, and so
// is the daemon's wait before finalization.
func TestADaemonsFinalWaitAtExitIsNoCycle(t *testing.T) {
	in := newInterp(nil, Linux, Version{3, 10, 0})
	cycles := make(chan Cycle, 8)
	in.G.onCycle = func(c Cycle) { cycles <- c }
	main := in.newThread("MainThread", false, true)
	gone, before, after := in.newThread("daemon-1", true, false), in.newThread("daemon-2", true, false), in.newThread("daemon-3", true, false)
	worker := in.newThread("worker", false, false)
	l := in.G.NewLock("the lock of sys.stderr's BufferedWriter")
	l.Acquire(gone)
	in.endThread(gone)

	go l.Acquire(before)
	if c := waitCycle(t, cycles); !strings.Contains(c.Text, "daemon-2") {
		t.Fatalf("before finalization: got %q, want daemon-2's wait", c.Text)
	}
	in.fin.by.Store(main)
	go l.Acquire(after)
	in.G.WaitUntil(func() bool { return after.waiting != nil })
	go l.Acquire(worker)
	if c := waitCycle(t, cycles); !strings.Contains(c.Text, "worker") {
		t.Fatalf("at exit: got %q, want the worker's wait (daemon-3's is no cycle)", c.Text)
	}
	select {
	case c := <-cycles:
		t.Fatalf("at exit, a daemon's wait reported: %q", c.Text)
	default:
	}
}
