package sim

import (
	"sync"
	"testing"
)

// The threads one SIGINT wakes in a sys.stderr that waits for it take the
// GIL back in the order the threads were made, the main thread first,
// however late its goroutine runs (docs/TRUST.md, "The threads a signal
// wakes").
func TestTheThreadsASignalWakesTakeTheGILInTheOrderMade(t *testing.T) {
	in := newInterp(nil, Linux, Version{3, 12, 0})
	main := in.newThread("MainThread", false, true)
	main.AcquireGIL()
	in.Signals = &Signals{in: in, kind: HandlerCounting}
	stream := in.NewSignalWaitStream("StringIO")
	var mu sync.Mutex
	var order []string
	took := func(t *Thread) {
		mu.Lock()
		order = append(order, t.Name)
		mu.Unlock()
	}
	t1 := in.Start("T1", false, func(t *Thread) *PyErr {
		_ = stream.Write(t, "T1's line\n")
		took(t)
		return nil
	})
	go func() {
		in.G.WaitUntil(func() bool {
			return main.waiting == Resource(SignalArrival{}) && t1.waiting == Resource(SignalArrival{})
		})
		in.Signals.SetInterrupt()
	}()
	err := stream.Write(main, "MainThread's line\n")
	took(main)
	if err == nil || err.Type != "KeyboardInterrupt" {
		t.Errorf("the main thread's write returned %v, want KeyboardInterrupt", err)
	}
	main.Join(t1)
	if len(order) != 2 || order[0] != "MainThread" {
		t.Errorf("the woken threads took the GIL in the order %v, want MainThread first", order)
	}
}
