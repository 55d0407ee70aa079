package sim

// ttyLock is a terminal's write lock, as Linux's tty atomic_write_lock: a
// write(2) on a tty excludes every other writer until it returns, blocked
// or not (a non-blocking one meets EAGAIN meanwhile). The model's write is
// a non-blocking probe and then a blocking write of the rest: without the
// lock another thread's write landed between the two, inside the line,
// where the kernel lets none.
type ttyLock struct {
	g    *Graph
	room *PipeRoom // waiting for the lock is shown as a wait for room
	// writer is the thread inside a write(2) on the terminal. Graph mutex.
	writer *Thread
}

// lock takes the lock for t's write(2). Waiting for it is shown as a wait
// for room on fd 2: its holder waits for the parent to read. A signal ends
// the wait when interruptible (mutex_lock_interruptible: EINTR, nothing
// written); it reports whether one did.
func (l *ttyLock) lock(t *Thread, interruptible bool) (woke bool) {
	g, r := l.g, l.room
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.writer == nil {
		l.writer = t
		return false
	}
	interruptible = interruptible && r.wake.ok()
	if interruptible && r.wake.pending() {
		return true
	}
	wakes := r.wakes
	t.waiting, t.interruptible = r, interruptible
	t.waits++
	g.changedLocked()
	for l.writer != nil && !(interruptible && r.wakes != wakes) {
		g.cond.Wait()
	}
	t.waiting, t.interruptible = nil, false
	g.changedLocked()
	if l.writer != nil {
		r.wake.drain()
		return true
	}
	l.writer = t
	return false
}

// tryLock takes the lock for t's non-blocking write(2), as tty_write_lock
// with O_NDELAY: false (EAGAIN) when another writer is inside its write(2).
func (l *ttyLock) tryLock(t *Thread) bool {
	l.g.mu.Lock()
	busy := l.writer != nil
	if !busy {
		l.writer = t
	}
	l.g.mu.Unlock()
	return !busy
}

func (l *ttyLock) unlock(t *Thread) {
	l.g.mu.Lock()
	if l.writer == t {
		l.writer = nil
		l.g.changedLocked()
	}
	l.g.mu.Unlock()
}
