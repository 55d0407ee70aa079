package sim

// roomWait is how a write call on fd 2 (FD2.writeCall) waits once its
// write(2) found no room, chosen when fd 2 is arranged (FD2.arrangeLocked)
// rather than on every write: for an in-process drainer's read
// (drainerWait), for the parent's reader held (readerHold), or for the
// kernel (kernelWait). A write call on an fd 2 with no non-blocking twin
// (a file, or no /proc) never waits: it blocks, as it is.
type roomWait interface {
	// beginWriting and endWriting bracket t's write call.
	beginWriting(t *Thread)
	endWriting(t *Thread)
	// mustQueue reports whether t must wait for its turn at the room
	// before its next write(2): others wait for the same read.
	mustQueue(t *Thread) bool
	// wait is t's wait once rest, what is left of its write call, met no
	// room (interruptible: a signal may end it). It returns the bytes of
	// rest it wrote meanwhile, and whether a signal ended it (woke).
	wait(t *Thread, rest []byte, interruptible bool) (moved int, woke bool)
}

// noTurns is a roomWait's part where the writers take no turns at the
// room: a write call is not counted, and never queues before its write(2).
type noTurns struct{}

func (noTurns) beginWriting(*Thread)   {}
func (noTurns) endWriting(*Thread)     {}
func (noTurns) mustQueue(*Thread) bool { return false }

// drainerWait waits for the in-process drainer's next read of fd 2's pipe
// and its turn at the room the read made (PipeRoom.waitRead).
type drainerWait struct {
	noTurns
	room *PipeRoom
}

func (w drainerWait) wait(t *Thread, _ []byte, interruptible bool) (int, bool) {
	return 0, w.room.waitRead(t, interruptible)
}

// kernelWait waits as the kernel does for a reader the model does not
// see: a write call a signal cannot end writes the rest of its bytes with
// a blocking write(2); one it can polls for room or the wake-up pipe, and
// tries again.
type kernelWait struct {
	noTurns
	f *FD2
}

func (w kernelWait) wait(t *Thread, rest []byte, interruptible bool) (moved int, woke bool) {
	f := w.f
	if !interruptible {
		f.g.waitOn(t, f.room, func() { moved = f.blockingWrite(rest) })
		return moved, false
	}
	f.g.waitOnMode(t, f.room, true, func() { woke = f.wake.pollRoomOrWake() })
	return 0, woke
}
