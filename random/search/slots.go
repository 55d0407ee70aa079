package search

import (
	"container/heap"
	"context"
	"sync"
)

// slots hands out the children that may run at once (-j) by priority:
// when one ends, the waiting play with the highest priority starts (the
// earliest asked, among equals). Which play runs when changes no result,
// only how soon the search ends: a failure whose shrink is a long chain
// of slow children goes first, and the search's own runs fill the gaps.
type slots struct {
	size    int
	mu      sync.Mutex
	free    int
	waiting waiters
	asked   int
}

type waiter struct {
	prio  int64
	order int
	ready chan struct{}
	index int
}

type waiters []*waiter

func (w waiters) Len() int { return len(w) }
func (w waiters) Less(i, j int) bool {
	if w[i].prio != w[j].prio {
		return w[i].prio > w[j].prio
	}
	return w[i].order < w[j].order
}
func (w waiters) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].index, w[j].index = i, j
}
func (w *waiters) Push(x any) {
	x.(*waiter).index = len(*w)
	*w = append(*w, x.(*waiter))
}
func (w *waiters) Pop() any {
	old := *w
	x := old[len(old)-1]
	*w = old[:len(old)-1]
	x.index = -1
	return x
}

func newSlots(n int) *slots { return &slots{size: max(1, n), free: max(1, n)} }

// acquire waits for a slot; prio orders the waiters.
func (s *slots) acquire(ctx context.Context, prio int64) error {
	s.mu.Lock()
	if s.free > 0 && len(s.waiting) == 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	s.asked++
	w := &waiter{prio: prio, order: s.asked, ready: make(chan struct{})}
	heap.Push(&s.waiting, w)
	s.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		if w.index >= 0 {
			heap.Remove(&s.waiting, w.index)
			return ctx.Err()
		}
		// Handed a slot as the context ended: give it on.
		s.releaseLocked()
		return ctx.Err()
	}
}

func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *slots) releaseLocked() {
	if len(s.waiting) > 0 {
		w := heap.Pop(&s.waiting).(*waiter)
		close(w.ready)
		return
	}
	s.free++
}
