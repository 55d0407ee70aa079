package sim

import (
	"golang.org/x/sys/unix"

	"logjam/telemetry"
)

// Rearranged re-reads fd 2 after the process pointed it somewhere else
// (dup2 of a capture pipe onto fd 2, or the saved fd put back): the old
// non-blocking twin is closed (it is an open description of the old fd 2,
// and would keep a capture pipe's write end alive), the kind is detected
// again, a new twin is opened on the new fd 2, and the way a write waits
// for room is chosen again (arrangeLocked). Call it while no thread is
// writing to fd 2.
func (f *FD2) Rearranged() error {
	var st unix.Stat_t
	if err := unix.Fstat(2, &st); err != nil {
		return err
	}
	kind := fd2Kind(&st)
	_ = unix.SetNonblock(2, false)
	if f.probe >= 0 {
		_ = unix.Close(f.probe)
	}
	f.openProbe(kind)
	f.g.mu.Lock()
	f.Kind = kind
	f.room.kind = kind
	f.arrangeLocked()
	f.g.mu.Unlock()
	f.tel.Emit(telemetry.FD2{FDKind: string(kind)})
	return nil
}
