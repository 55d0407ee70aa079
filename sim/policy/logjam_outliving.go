package policy

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"logjam/internal/fdscan"
	"logjam/sim"
	"logjam/telemetry"
)

// outliving is logjam's answer to a Fatal line on an in-process forwarder's
// pipe (docs/CONTRACT.md, "A Fatal line on a forwarder's pipe"): what is in
// that pipe dies with the process, and so does a chunk the forwarder has
// read and holds while it waits for the GIL the fatal thread holds. The
// stream that outlives the process is the one the forwarder copies to, the
// old fd 2: the sink records what fd 2 is when it is installed, and the
// fatal path finds a descriptor still open on it (the forwarder's saved
// copy). logjam.hpp does the same with the same system calls.
type outliving struct {
	installed   fdscan.Identity // fd 2 when the sink was installed
	installedOK bool

	// The last scan for fd 2's reader, keyed by what fd 2 was then.
	scanned   bool
	scannedID fdscan.Identity
	reader    int
}

// newOutliving records what fd 2 is at install. When fd 2 is a
// forwarder's pipe already (the module imported under a capture), the
// descriptor sys.stderr names as its _original_stdstream_copy (ipykernel's
// OutStream keeps its saved copy of the old fd 2 there) stands for what fd
// 2 was; without one the record is the pipe, and no copy will be found.
func newOutliving(stderr sim.Stream) *outliving {
	o := &outliving{reader: -1}
	o.installed, o.installedOK = fdscan.Of(2)
	if fdscan.PipeReader(2) < 0 {
		return o
	}
	if s, ok := stderr.(interface{ OriginalStdstreamCopy() (int, bool) }); ok {
		if fd, ok := s.OriginalStdstreamCopy(); ok {
			if id, ok := fdscan.Of(fd); ok {
				o.installed, o.installedOK = id, true
			}
		}
	}
	return o
}

// Install is the module imported again (sim.Runtime.ImportModule): what fd
// 2 is, recorded anew (TestASinkInstalledUnderIPyKernelsCaptureFindsItsSavedCopy).
func (p *logjamSink) Install(t *sim.Thread) { p.out = newOutliving(p.rt.In.Stderr()) }

// forwarderReader is the read end of fd 2's pipe when a descriptor of this
// process holds it (an in-process forwarder's), else -1. One fstat of fd 2
// each time; the scan of every descriptor only when fd 2 is another object
// than at the last scan (a capture began or ended). Only the thread that
// owns the sink's call state asks (under the GIL), so no lock.
func (o *outliving) forwarderReader() int {
	id, ok := fdscan.Of(2)
	if !ok {
		return -1
	}
	if !o.scanned || id != o.scannedID {
		o.scanned, o.scannedID, o.reader = true, id, fdscan.PipeReader(2)
	}
	return o.reader
}

// copyOf is the outliving copy of fd 2 when fd 2 is a forwarder's pipe
// whose reader is rd: a descriptor other than fd 2 (and the pipe's own
// ends) open on what fd 2 was at install; -1 when there is none (the sink
// was installed after the capture began: fd 2 was the pipe already).
func (o *outliving) copyOf(rd int) int {
	if !o.installedOK {
		return -1
	}
	if now, ok := fdscan.Of(2); !ok || now == o.installed {
		return -1
	}
	if c := fdscan.Copy(o.installed, 2); c != rd {
		return c
	}
	return -1
}

// rescue is the fatal path to the outliving copy out: first what the
// forwarder's pipe holds (read through a non-blocking second open of its
// read end, so that a forwarder reading at the same moment cannot leave it
// waiting), then the kept lines, then the fatal line. It returns the bytes
// it drained. A write to out that blocks (a full pipe of the parent's) is
// bounded by the room check's wait; what it did not take is lost.
func (p *logjamSink) rescue(t *sim.Thread, l sim.Line, tk taken, rd, out int) {
	drained := 0
	if tw, err := unix.Open("/proc/self/fd/"+strconv.Itoa(rd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
		buf := make([]byte, 4096)
		for {
			n, err := unix.Read(tw, buf)
			if n > 0 {
				drained += n
				writeOut(out, buf[:n])
			}
			if n <= 0 && !errors.Is(err, unix.EINTR) {
				break
			}
		}
		unix.Close(tw)
	}
	for _, b := range tk.all() {
		writeOut(out, b)
	}
	p.rt.Tel.Emit(telemetry.FatalFlush{Thread: t.Name, Fatal: l.Seq, Written: tk.lines, To: telemetry.ToOutlivingCopy, Drained: drained})
	p.rt.Route(t, l, "fd2", fmt.Sprintf("fatal line to fd 2's outliving copy (fd %d; %d bytes drained from the forwarder's pipe), then abort", out, drained))
	writeOut(out, l.Bytes)
}

// writeOut writes b whole to fd, retrying EINTR and waiting on EAGAIN for
// room at most RoomWait each time.
func writeOut(fd int, b []byte) {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if n > 0 {
			b = b[n:]
			continue
		}
		switch {
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EAGAIN):
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if k, _ := unix.Poll(pfd, int(RoomWait.Milliseconds())); k <= 0 {
				return
			}
		default:
			return
		}
	}
}
