package sim

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"logjam/pipes"
)

// nopPolicy is a sink that does nothing: these tests write to sys.stderr
// themselves.
type nopPolicy struct{}

func (nopPolicy) Name() string                                  { return "nop" }
func (nopPolicy) Enter(*Thread)                                 {}
func (nopPolicy) Emit(*Thread, Line)                            {}
func (nopPolicy) Exit(*Thread) *PyErr                           { return nil }
func (nopPolicy) ExceptionText([]byte, []byte) (string, *PyErr) { return "", nil }

// pipeOnFD2 points this process's fd 2 at an empty pipe of capacity bytes
// and returns it; fd 2 is put back (and the pipe closed) after the test.
func pipeOnFD2(t *testing.T, capacity int) *pipes.Pipe {
	t.Helper()
	p, err := pipes.New(capacity)
	if err != nil {
		t.Skip("no pipes here:", err)
	}
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(p.W.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Dup2(saved, 2); _ = unix.Close(saved); p.Close() })
	return p
}

// fullPipeOnFD2 points this process's fd 2 at a one-page pipe nobody reads,
// filled, and returns its read end; fd 2 is put back after the test.
func fullPipeOnFD2(t *testing.T) *os.File {
	t.Helper()
	p := pipeOnFD2(t, 4096)
	if err := unix.SetNonblock(int(p.W.Fd()), true); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := unix.Write(int(p.W.Fd()), bytes.Repeat([]byte{'.'}, 128)); err != nil {
			break // EAGAIN: full
		}
	}
	return p.R
}

// interruptedWrite writes line to sys.stderr on the main thread while fd 2
// is full; a real SIGINT arrives once the write waits for room. It returns
// what the write raised.
func interruptedWrite(t *testing.T, b Buffering, line []byte) (*Runtime, *PyErr) {
	t.Helper()
	rt, err := New(Options{Platform: Linux, Python: Version{3, 12, 0}, Buffering: b, NoTelemetry: true,
		Policy: func(*Runtime) (Policy, error) { return nopPolicy{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		rt.G.WaitUntilWaiting(rt.Main, rt.FD2.Room())
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	return rt, rt.In.Original().Write(rt.Main, string(line))
}

// drain reads what the pipe holds.
func drain(t *testing.T, r *os.File) []byte {
	t.Helper()
	_ = unix.SetNonblock(int(r.Fd()), true)
	var out []byte
	buf := make([]byte, 65536)
	for {
		n, err := unix.Read(int(r.Fd()), buf)
		if n <= 0 || err != nil {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// BufferedWriter retention: the SIGINT ends the blocked write(2) with
// nothing written, the handler raises KeyboardInterrupt out of
// sys.stderr.write, and the line stays in the buffer: the next flush writes
// it. Unbuffered (python -u), the raw FileIO keeps nothing: the line is gone.
func TestAnInterruptedWriteKeepsItsLineOnlyWhenBuffered(t *testing.T) {
	line := []byte("I 00:00:00.000001 executorch:xnnpack_backend.cpp:211] a line the SIGINT interrupts\n")
	for _, tc := range []struct {
		b    Buffering
		kept bool
	}{{Buffered, true}, {Unbuffered, false}} {
		t.Run(string(tc.b), func(t *testing.T) {
			r := fullPipeOnFD2(t)
			rt, err := interruptedWrite(t, tc.b, line)
			if !err.IsKeyboardInterrupt() {
				t.Fatalf("the interrupted write raised %v, want KeyboardInterrupt", err)
			}
			if got := drain(t, r); bytes.Contains(got, line) {
				t.Fatalf("the line reached fd 2 before any room: %q", got)
			}
			if err := rt.In.Original().(*OriginalStream).Flush(rt.Main); err != nil {
				t.Fatalf("flush: %v", err)
			}
			if got := bytes.Contains(drain(t, r), line); got != tc.kept {
				t.Fatalf("after the flush, line on fd 2 = %v, want %v", got, tc.kept)
			}
		})
	}
}

// fwrite does not retry EINTR: a direct write that a SIGINT interrupts
// while it waits for room loses its line; WriteAll retries and loses nothing.
func TestADirectWriteLosesItsLineOnEINTRUnlessItRetries(t *testing.T) {
	line := []byte("E 00:00:00.000002 executorch:xnnpack_backend.cpp:97] compileModel failed: 0x12\n")
	for _, retry := range []bool{false, true} {
		t.Run(map[bool]string{false: "fwrite", true: "retrying"}[retry], func(t *testing.T) {
			r := fullPipeOnFD2(t)
			rt, err := New(Options{Platform: Linux, Python: Version{3, 12, 0}, NoTelemetry: true,
				Policy: func(*Runtime) (Policy, error) { return nopPolicy{}, nil }})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan int)
			go func() {
				if retry {
					rt.FD2.WriteAll(rt.Main, line)
					done <- len(line)
					return
				}
				done <- rt.FD2.WriteDirect(rt.Main, line)
			}()
			rt.G.WaitUntilWaiting(rt.Main, rt.FD2.Room())
			seen := rt.In.Signals.Trips()
			_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
			rt.In.Signals.AwaitTrips(seen + 1)
			if retry {
				// The retry waits again; the reader makes room (the filler
				// only: the line may follow at once).
				rt.G.WaitUntil(func() bool { return rt.Main.WaitStateLocked().Seq >= 2 })
				filler := make([]byte, 4096)
				if _, err := io.ReadFull(r, filler); err != nil {
					t.Fatal(err)
				}
			}
			n := <-done
			got := bytes.Contains(drain(t, r), line)
			if retry && (!got || n != len(line)) {
				t.Fatalf("retrying: line on fd 2 = %v, want it there", got)
			}
			if !retry && (got || n != 0) {
				t.Fatalf("fwrite: %d bytes written, line on fd 2 = %v; want the line lost", n, got)
			}
		})
	}
}

// The BufferedWriter's lock: a second thread's sys.stderr.write that finds
// it held (the first thread's write blocked on a full pipe, the GIL
// released) waits for it, shown in the graph, and its line goes out after
// the first thread's whole text. Without the lock the second write goes
// straight to fd 2 and waits for room there, and its line can land inside
// the first one's text (RF3 under adaptive and merged, docs/FINDINGS.md).
func TestASecondWriterWaitsForTheBufferedWritersLock(t *testing.T) {
	r := fullPipeOnFD2(t)
	rt, err := New(Options{Platform: Linux, Python: Version{3, 12, 0}, Buffering: Buffered, NoTelemetry: true,
		Policy: func(*Runtime) (Policy, error) { return nopPolicy{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	in := rt.In
	first := strings.Repeat("M", 6000) + "\n" // larger than the buffer: raw writes under the lock
	second := "T2: a line of its own\n"
	t2 := in.Start("T2", false, func(t *Thread) *PyErr { return in.Original().Write(t, second) })
	in.G.WaitUntil(func() bool { return slices.Contains(in.GIL.WaitersLocked(), t2) })

	var out bytes.Buffer
	read := make(chan struct{})
	want := 4096 + len(first) + len(second) // the filler, then both texts
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for out.Len() < want {
			n, err := r.Read(buf)
			if err != nil {
				return
			}
			out.Write(buf[:n])
		}
	}()
	// The reader drains: MainThread's write goes on. T2 got the GIL at its
	// first write(2); once MainThread's write is over (it holds the GIL
	// again), T2 waits for the GIL, holding the lock MainThread let go to it.
	if err := in.Original().Write(rt.Main, first); err != nil {
		t.Fatalf("MainThread's write: %v", err)
	}
	var holds []string
	in.G.WaitUntil(func() bool { holds = t2.heldNamesLocked(); return t2.waiting == Resource(in.GIL) })
	if !slices.Contains(holds, bufferedWriterLock) {
		t.Errorf("T2 waits for the GIL holding %v, want %s (it waited for it during MainThread's write)", holds, bufferedWriterLock)
	}
	rt.Main.Join(t2)
	<-read
	got := strings.TrimLeft(out.String(), ".")
	if got != first+second {
		t.Fatalf("fd 2 got %d bytes, T2's line at %d; want MainThread's %d bytes, then T2's line",
			len(got), strings.Index(got, second), len(first))
	}
}
