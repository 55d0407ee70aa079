package sim

import (
	"logjam/internal/pytext"
)

// ForwarderStyle is who captured fd 2 in-process, and so how its forwarder
// reads the pipe and where it writes the text (docs/FACTS.md, "Jupyter and fd
// capture").
type ForwarderStyle struct {
	Name  string
	Chunk int // bytes one os.read asks for
	// Capacity of the capture pipe (0: CapturePipeSize).
	Capacity int
}

// The forwarders of docs/FACTS.md.
var (
	// IPyKernel: os.read(pipe, 1000), then OutStream.write(text) (the
	// OutStream is sys.stderr), then the bytes to the saved fd.
	IPyKernel = ForwarderStyle{Name: "ipykernel", Chunk: 1000}
	// Wurlitzer: reads 1024 bytes and writes to a Python-side sink stream;
	// sys.stderr is left alone. The bytes also go to the saved fd, so the
	// parent still sees them on the real stderr.
	Wurlitzer = ForwarderStyle{Name: "wurlitzer", Chunk: 1024}
)

// CapturePipeSize is the capacity of the capture pipe: one page, so a call
// that logs 16 KiB fills it several times over (docs/SCENARIOS.md, sink matrix).
const CapturePipeSize = 4096

// FD2Capture is fd 2 pointed at a pipe drained by an in-process forwarder
// thread that needs the GIL for each chunk.
type FD2Capture struct {
	rt     *Runtime
	style  ForwarderStyle
	sink   Stream
	read   int // the pipe's read end
	saved  int // the old fd 2
	F      *Thread
	closed bool
	// closing: the old fd 2 is being put back; the forwarder reads freely
	// to EOF (no writer is left). Guarded by the graph's mutex.
	closing bool
}

// forward is the forwarder's loop: a real, blocking read outside the GIL
// at a moment the model decides (awaitRead);
// then, holding the GIL, the text to the Python stream; then, without it,
// the bytes to the saved fd. It ends at EOF (every write end closed).
func (c *FD2Capture) forward(t *Thread) {
	buf := make([]byte, c.style.Chunk)
	for {
		c.awaitRead()
		n, ok := readChunk(c.read, buf)
		if !ok {
			return
		}
		c.rt.FD2.Drained(t)
		chunk := buf[:n]
		t.AcquireGIL()
		_ = c.sink.Write(t, pytext.DecodeEscaped(chunk))
		t.ReleaseGIL()
		writeAll(c.saved, chunk)
	}
}
