package pipes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// factErrorf reports a kernel that does not behave as docs/FACTS.md ("Pipes")
// says, naming the fact so the failure reads as a finding about the machine.
func factErrorf(t *testing.T, fact, format string, args ...any) {
	t.Helper()
	t.Errorf("kernel fact does not hold on this machine: %q: %s", fact, fmt.Sprintf(format, args...))
}

func newPipe(t *testing.T, capacity int) *Pipe {
	t.Helper()
	p, err := New(capacity)
	if err != nil {
		t.Fatalf("New(%d): %v", capacity, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// writeFd is the write end's descriptor. Fd has no side effect here: W is a
// blocking file outside Go's poller.
func writeFd(p *Pipe) int { return int(p.W.Fd()) }

// fillNonblocking makes fd non-blocking and writes size-byte pieces until the
// kernel answers EAGAIN, returning the bytes accepted (partial writes count).
func fillNonblocking(t *testing.T, fd, size int) int {
	t.Helper()
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatalf("set O_NONBLOCK: %v", err)
	}
	piece := bytes.Repeat([]byte{'x'}, size)
	total := 0
	for {
		n, err := unix.Write(fd, piece)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return total
		case err != nil:
			t.Fatalf("write after %d bytes: %v", total, err)
		}
		total += n
	}
}

func TestSetPipeSizeRounding(t *testing.T) {
	const fact = "F_SETPIPE_SZ rounds up to a power-of-two number of pages, minimum one page"
	for _, tc := range []struct{ ask, want int }{{1, 4096}, {5000, 8192}} {
		if got := newPipe(t, tc.ask).Capacity; got != tc.want {
			factErrorf(t, fact, "asked %d, F_GETPIPE_SZ says %d, want %d", tc.ask, got, tc.want)
		}
	}

	const defaultFact = "a new pipe holds 16 pages (65536 bytes)"
	if got := newPipe(t, 0).Capacity; got != 65536 {
		factErrorf(t, defaultFact, "New(0) capacity %d", got)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got, err := Capacity(r); err != nil || got != 65536 {
		factErrorf(t, defaultFact, "os.Pipe capacity %d (err %v)", got, err)
	}
	if got, err := SetCapacity(w, 3*4096); err != nil || got != 4*4096 {
		factErrorf(t, fact, "SetCapacity(3 pages) returned %d (err %v), want %d", got, err, 4*4096)
	}
}

func TestCapacityCountedInPageSlots(t *testing.T) {
	const fact = "pipe capacity is counted in page slots"
	for _, tc := range []struct {
		capacity, piece, want int
	}{
		{0, 1, 65536},    // 1-byte writes merge until every page is full
		{0, 5000, 54096}, // 5000-byte writes leave page tails unused
		{4096, 100, 4000},
	} {
		t.Run(fmt.Sprintf("capacity=%d/write=%d", tc.capacity, tc.piece), func(t *testing.T) {
			p := newPipe(t, tc.capacity)
			if got := fillNonblocking(t, writeFd(p), tc.piece); got != tc.want {
				factErrorf(t, fact, "%d-byte non-blocking writes into a %d-byte pipe stopped at %d, want %d",
					tc.piece, p.Capacity, got, tc.want)
			}
		})
	}
}

func TestPollOutNeedsWholeSlot(t *testing.T) {
	const fact = "poll reports POLLOUT only when a whole page slot is free"
	p := newPipe(t, 4096)
	w := writeFd(p)
	if _, err := p.W.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	check := func(state string, want bool) {
		t.Helper()
		got, err := PollWritable(w, 0)
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		if got != want {
			factErrorf(t, fact, "%s: POLLOUT %v, want %v", state, got, want)
		}
	}
	check("full one-page pipe", false)
	if _, err := io.ReadFull(p.R, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	check("after reading 1 byte", false)
	if _, err := io.ReadFull(p.R, make([]byte, 4095)); err != nil {
		t.Fatal(err)
	}
	check("after reading all 4096 bytes", true)
}

func TestPollWritableTimeoutAndWakeUp(t *testing.T) {
	p := newPipe(t, 4096)
	w := writeFd(p)
	if _, err := p.W.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	const timeout = 30 * time.Millisecond
	start := time.Now()
	room, err := PollWritable(w, timeout)
	if elapsed := time.Since(start); err != nil || room || elapsed < timeout {
		t.Fatalf("full pipe: PollWritable(%v) = %v, %v after %v; want false, nil after at least the timeout",
			timeout, room, err, elapsed)
	}

	drained := make(chan error, 1)
	go func() { _, err := io.ReadFull(p.R, make([]byte, 4096)); drained <- err }()
	if room, err := PollWritable(w, 5*time.Second); err != nil || !room {
		t.Fatalf("PollWritable while the pipe drains = %v, %v; want true", room, err)
	}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}

	p.R.Close()
	if _, err := PollWritable(w, 0); !errors.Is(err, unix.EPIPE) {
		t.Fatalf("PollWritable with the read end closed: %v, want EPIPE", err)
	}
}

func TestFIONREADCountsQueuedBytes(t *testing.T) {
	const fact = "FIONREAD returns the unread byte count on both ends of a pipe"
	p := newPipe(t, 0)
	if _, err := p.W.Write(make([]byte, 123)); err != nil {
		t.Fatal(err)
	}
	check := func(want int) {
		t.Helper()
		for end, fd := range map[string]int{"write end": writeFd(p), "read end": int(p.R.Fd())} {
			got, err := Queued(fd)
			if err != nil {
				factErrorf(t, fact, "%s: %v", end, err)
			} else if got != want {
				factErrorf(t, fact, "%s: %d, want %d", end, got, want)
			}
		}
	}
	check(123)
	if _, err := io.ReadFull(p.R, make([]byte, 23)); err != nil {
		t.Fatal(err)
	}
	check(100)
}

// hasCapSysResource reports whether this thread's effective set holds
// CAP_SYS_RESOURCE (every thread of the test binary has the same set).
func hasCapSysResource(t *testing.T) bool {
	t.Helper()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		t.Fatalf("capget: %v", err)
	}
	return data[unix.CAP_SYS_RESOURCE/32].Effective&(1<<(unix.CAP_SYS_RESOURCE%32)) != 0
}

func TestSetPipeSizeAboveMaxNeedsCapability(t *testing.T) {
	const fact = "F_SETPIPE_SZ above /proc/sys/fs/pipe-max-size fails with EPERM without CAP_SYS_RESOURCE"
	raw, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil {
		t.Fatal(err)
	}
	maxSize, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	capable := hasCapSysResource(t)

	t.Run("unprivileged", func(t *testing.T) {
		if capable {
			t.Skipf("running as uid %d with CAP_SYS_RESOURCE, which lifts the pipe-max-size limit; EPERM not expected",
				os.Getuid())
		}
		p := newPipe(t, 0)
		if _, err := SetCapacity(p.W, 2*maxSize); !errors.Is(err, unix.EPERM) {
			factErrorf(t, fact, "SetCapacity(%d) with pipe-max-size %d: err %v, want EPERM", 2*maxSize, maxSize, err)
		}
	})

	// Capabilities are per thread on Linux, so a privileged run can still
	// check the fact: drop CAP_SYS_RESOURCE on one locked thread that the
	// runtime discards afterwards.
	t.Run("capability dropped on one thread", func(t *testing.T) {
		if !capable {
			t.Skip("already without CAP_SYS_RESOURCE; covered by the unprivileged sub-test")
		}
		p := newPipe(t, 0)
		result := make(chan error, 1)
		go func() {
			// Never unlocked: when this goroutine returns, the runtime ends
			// the thread, so the reduced set cannot leak to other goroutines.
			runtime.LockOSThread()
			hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
			var data [2]unix.CapUserData
			if err := unix.Capget(&hdr, &data[0]); err != nil {
				result <- fmt.Errorf("capget: %w", err)
				return
			}
			data[unix.CAP_SYS_RESOURCE/32].Effective &^= 1 << (unix.CAP_SYS_RESOURCE % 32)
			if err := unix.Capset(&hdr, &data[0]); err != nil {
				result <- fmt.Errorf("capset: %w", err)
				return
			}
			_, err := SetCapacity(p.W, 2*maxSize)
			result <- err
		}()
		if err := <-result; !errors.Is(err, unix.EPERM) {
			factErrorf(t, fact, "SetCapacity(%d) with pipe-max-size %d: err %v, want EPERM", 2*maxSize, maxSize, err)
		}
	})
}

func TestMacOSPlatform(t *testing.T) {
	t.Run("one-page pipe holding 600 bytes", func(t *testing.T) {
		p := newPipe(t, 4096)
		w := writeFd(p)
		if _, err := p.W.Write(make([]byte, 600)); err != nil {
			t.Fatal(err)
		}
		if room, err := MacOS.HasRoom(w, 0); err != nil || !room {
			t.Errorf("MacOS.HasRoom = %v, %v; want true (XNU reports 16384-600 >= 512 free)", room, err)
		}
		if full, err := SmallPipeFull(w); err != nil || !full {
			t.Errorf("SmallPipeFull = %v, %v; want true (600 >= %d queued)", full, err, MacPipeBuf)
		}
		if room, err := Linux.HasRoom(w, 0); err != nil || room {
			factErrorf(t, "poll reports POLLOUT only when a whole page slot is free",
				"one-page pipe holding 600 bytes: Linux.HasRoom = %v, %v; want false", room, err)
		}
	})
	t.Run("empty pipe", func(t *testing.T) {
		p := newPipe(t, 4096)
		w := writeFd(p)
		for _, platform := range []Platform{Linux, MacOS} {
			if room, err := platform.HasRoom(w, 0); err != nil || !room {
				t.Errorf("%v.HasRoom on an empty pipe = %v, %v; want true", platform, room, err)
			}
		}
		if full, err := SmallPipeFull(w); err != nil || full {
			t.Errorf("SmallPipeFull on an empty pipe = %v, %v; want false", full, err)
		}
	})
	t.Run("large pipe waits for room", func(t *testing.T) {
		// Above 16 KiB XNU uses the real buffer size, so a full 64 KiB pipe
		// has no room under either platform.
		p := newPipe(t, 65536)
		w := writeFd(p)
		if _, err := p.W.Write(make([]byte, 65536)); err != nil {
			t.Fatal(err)
		}
		if room, err := MacOS.HasRoom(w, 0); err != nil || room {
			t.Fatalf("full 64 KiB pipe: MacOS.HasRoom(0) = %v, %v; want false", room, err)
		}
		const wait = 20 * time.Millisecond
		start := time.Now()
		if room, err := MacOS.HasRoom(w, wait); err != nil || room || time.Since(start) < wait {
			t.Fatalf("full 64 KiB pipe: MacOS.HasRoom(%v) = %v, %v after %v; want false after the wait",
				wait, room, err, time.Since(start))
		}
		drained := make(chan error, 1)
		go func() { _, err := io.ReadFull(p.R, make([]byte, MacPipeBuf)); drained <- err }()
		if room, err := MacOS.HasRoom(w, 5*time.Second); err != nil || !room {
			t.Fatalf("MacOS.HasRoom while %d bytes drain = %v, %v; want true", MacPipeBuf, room, err)
		}
		if err := <-drained; err != nil {
			t.Fatal(err)
		}
	})
}

// pattern returns n bytes that reveal reordering or loss.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

func TestReaderStall(t *testing.T) {
	p := newPipe(t, 0)
	rd := NewReader(p.R, ReaderOptions{})
	t.Cleanup(rd.Stop)
	rd.Stall()

	data := pattern(3000)
	if _, err := p.W.Write(data); err != nil {
		t.Fatal(err)
	}
	// The deliberate observation window: Wait must time out (W is open), and
	// a stalled reader must not have taken anything meanwhile.
	const window = 50 * time.Millisecond
	if err := rd.Wait(window); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled reader: Wait(%v) = %v, want a deadline error", window, err)
	}
	if got := rd.Bytes(); len(got) != 0 {
		t.Fatalf("stalled reader read %d bytes within %v", len(got), window)
	}
	if q, err := Queued(int(p.R.Fd())); err != nil || q != len(data) {
		t.Fatalf("queued in the pipe while stalled: %d (err %v), want %d", q, err, len(data))
	}

	rd.Resume()
	p.W.Close()
	if err := rd.Wait(5 * time.Second); err != nil {
		t.Fatalf("Wait after Resume and close: %v", err)
	}
	if got := rd.Bytes(); !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, want the %d written, in order", len(got), len(data))
	}
}

func TestReaderSlow(t *testing.T) {
	p := newPipe(t, 0)
	rd := NewReader(p.R, ReaderOptions{Stalled: true})
	t.Cleanup(rd.Stop)
	rd.SetSlow(128, time.Millisecond)

	data := pattern(5000) // fits the pipe, so the write cannot block
	if _, err := p.W.Write(data); err != nil {
		t.Fatal(err)
	}
	p.W.Close()
	rd.Resume()
	if err := rd.Wait(5 * time.Second); err != nil {
		t.Fatalf("slow reader: %v", err)
	}
	if got := rd.Bytes(); !bytes.Equal(got, data) {
		t.Fatalf("slow reader read %d bytes, want the %d written, in order", len(got), len(data))
	}
}

func TestReaderStopLeavesFileUsable(t *testing.T) {
	p := newPipe(t, 0)
	rd := NewReader(p.R, ReaderOptions{})
	stopped := make(chan struct{})
	go func() { rd.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return while the reader waited for data")
	}
	if err := rd.Wait(0); !errors.Is(err, ErrStopped) {
		t.Fatalf("Wait after Stop = %v, want ErrStopped", err)
	}
	// The read end is still open and its deadline cleared: data written now
	// is read directly.
	if _, err := p.W.Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(p.R, buf); err != nil || string(buf) != "after" {
		t.Fatalf("read after Stop = %q, %v", buf, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, slave, err := OpenPTY()
	if err != nil {
		t.Fatalf("OpenPTY: %v", err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	return master, slave
}

func TestPTYLinesArriveIntact(t *testing.T) {
	master, slave := openPTY(t)
	rd := NewReader(master, ReaderOptions{})
	t.Cleanup(rd.Stop)

	var want bytes.Buffer
	for i := range 100 {
		fmt.Fprintf(&want, "line %03d: stderr\n", i)
	}
	// 1.8 KB fits the pty's buffering, so these blocking writes return.
	for line := range strings.Lines(want.String()) {
		if _, err := slave.WriteString(line); err != nil {
			t.Fatal(err)
		}
	}
	slave.Close()
	if err := rd.Wait(5 * time.Second); err != nil {
		t.Fatalf("master reader: %v", err)
	}
	got := rd.Bytes()
	if bytes.Contains(got, []byte("\r")) {
		t.Errorf("output processing still on: the master saw \\r (ONLCR)")
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("master read %d bytes, want the %d written lines complete and in order:\n%q", len(got), want.Len(), got)
	}
}

func TestPTYBuffersWhileMasterStalled(t *testing.T) {
	master, slave := openPTY(t)
	rd := NewReader(master, ReaderOptions{})
	t.Cleanup(rd.Stop)
	rd.Stall()

	// A second open file description of the slave, not a dup: O_NONBLOCK
	// belongs to the description, so setting it on a dup would make the
	// child-facing slave non-blocking too.
	wfd, err := unix.Open(slave.Name(), unix.O_WRONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	writer := os.NewFile(uintptr(wfd), slave.Name())
	defer writer.Close()

	data := pattern(1 << 20)
	written := 0
	write := func() {
		for written < len(data) {
			n, err := unix.Write(wfd, data[written:min(written+1024, len(data))])
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				return
			}
			if err != nil {
				t.Fatalf("write to slave after %d bytes: %v", written, err)
			}
			written += n
		}
	}
	write()
	first := written
	if first == 0 {
		t.Fatal("the slave accepted nothing while the master was unread")
	}
	// The pty moves bytes from its flip buffer to the master's line discipline
	// in a kernel worker, so room can reappear after the first EAGAIN; keep
	// writing while poll says so to find the settled figure.
	for {
		room, err := PollWritable(wfd, 20*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if !room {
			break
		}
		before := written
		write()
		if written == before {
			break
		}
	}
	t.Logf("pty slave accepted %d bytes before the first EAGAIN and %d in all while the master was not read", first, written)
	if got := rd.Bytes(); len(got) != 0 {
		t.Fatalf("stalled master reader read %d bytes", len(got))
	}

	rd.Resume()
	writer.Close()
	slave.Close()
	if err := rd.Wait(5 * time.Second); err != nil {
		t.Fatalf("master reader after Resume: %v", err)
	}
	if got := rd.Bytes(); !bytes.Equal(got, data[:written]) {
		t.Fatalf("master read %d bytes, want the %d the slave accepted, in order", len(got), written)
	}
}

// A hold is exact and apart from a stall: once Hold returns nothing leaves
// the pipe, Resume (a stall's end) does not end it, Grant reads until the
// next Hold, and Release reads on.
func TestReaderHold(t *testing.T) {
	p := newPipe(t, 0)
	rd := NewReader(p.R, ReaderOptions{})
	t.Cleanup(rd.Stop)
	data := pattern(4000)
	readUpTo := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for len(rd.Bytes()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("the reader read %d bytes, want %d", len(rd.Bytes()), n)
			}
			time.Sleep(time.Millisecond) // a condition polled
		}
	}
	// The deliberate observation window: a held reader takes nothing.
	const window = 50 * time.Millisecond
	stays := func(n int) {
		t.Helper()
		time.Sleep(window)
		if got := len(rd.Bytes()); got != n {
			t.Fatalf("held reader: %d bytes read, want %d", got, n)
		}
	}
	write := func(b []byte) {
		t.Helper()
		if _, err := p.W.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	write(data[:1000])
	readUpTo(1000)
	rd.Hold()
	write(data[1000:3000])
	rd.Resume()
	stays(1000)
	rd.Grant()
	readUpTo(3000)
	rd.Hold()
	write(data[3000:])
	stays(3000)
	rd.Release()
	p.W.Close()
	if err := rd.Wait(5 * time.Second); err != nil {
		t.Fatalf("Wait after Release and close: %v", err)
	}
	if got := rd.Bytes(); !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, want the %d written, in order", len(got), len(data))
	}
}
