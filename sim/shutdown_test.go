package sim

import (
	"slices"
	"sync/atomic"
	"testing"
)

// The exit does not wait again for a thread the script joined, so it lets
// no daemon run: a daemon queued for the GIL first gets it at finalization
// and meets its fate there, however late main's goroutine would have queued
// again after a join (docs/TRUST.md, "A join at shutdown").
func TestShutdownLetsNoDaemonRunForAThreadTheScriptJoined(t *testing.T) {
	in := newInterp(nil, Linux, Version{3, 12, 0})
	main := in.newThread("MainThread", false, true)
	main.AcquireGIL()
	var workers []*Thread
	for _, name := range []string{"T1", "T2", "T3"} {
		workers = append(workers, in.Start(name, false, func(*Thread) *PyErr { return nil }))
	}
	for _, w := range workers {
		main.Join(w)
	}
	var turns atomic.Int32
	d := in.Start("daemon-1", true, func(t *Thread) *PyErr {
		for {
			turns.Add(1)
			t.SwitchGIL()
		}
	})
	in.G.WaitUntil(func() bool { return slices.Contains(in.GIL.waiters, d) })
	if err := in.Shutdown(main); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := turns.Load(); n != 0 {
		t.Errorf("the daemon ran %d bytecode(s) before finalization: the exit let the GIL go for a thread the script had joined", n)
	}
	<-d.Done()
}
