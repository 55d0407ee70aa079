package sim

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"logjam/pipes"
)

// Sink throughput, side by side in one run (figures for notes; no test
// asserts a time):
//
//	go test -run '^$' -bench DirectWrite -benchtime 200000x ./sim/
//	go test -run '^$' -bench KeepPath -benchtime 3x ./sim/

// onFD2 points this process's fd 2 at f for the benchmark and restores it.
func onFD2(b *testing.B, f *os.File) {
	saved, err := unix.Dup(2)
	if err != nil {
		b.Fatal(err)
	}
	if err := unix.Dup2(int(f.Fd()), 2); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = unix.Dup2(saved, 2); _ = unix.Close(saved) })
}

func benchLine() []byte {
	return []byte("I 00:00:01.000001 executorch:xnnpack_backend.cpp:211] delegate trace 1 abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq\n")
}

// drainedPipe is a pipe of size bytes on fd 2 that another goroutine drains.
func drainedPipe(b *testing.B, size int) {
	p, err := pipes.New(size)
	if err != nil {
		b.Skip("no pipes here:", err)
	}
	r := pipes.NewReader(p.R, pipes.ReaderOptions{})
	onFD2(b, p.W)
	b.Cleanup(func() { r.Stop(); p.Close() })
}

func devNull(b *testing.B) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	onFD2(b, f)
	b.Cleanup(func() { f.Close() })
}

func BenchmarkDirectWrite(b *testing.B) {
	line := benchLine()
	for _, target := range []struct {
		name  string
		setup func(*testing.B)
	}{
		{"devnull", devNull},
		{"drained-pipe-4KiB", func(b *testing.B) { drainedPipe(b, 4096) }},
		{"drained-pipe-64KiB", func(b *testing.B) { drainedPipe(b, 65536) }},
	} {
		b.Run(target.name+"/raw-write", func(b *testing.B) {
			target.setup(b)
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := unix.Write(2, line); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, pol := range []string{"merged", "logjam"} {
			b.Run(target.name+"/"+pol, func(b *testing.B) {
				target.setup(b)
				rt, err := New(Options{Platform: Linux, Python: Version{3, 12, 0}, Policy: pol, NoTelemetry: true})
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(line)))
				rt.Call(rt.Main, "execute", func() *NativeError {
					for b.Loop() {
						rt.Policy.Emit(rt.Main, Line{Seq: 1, Level: Info, Bytes: line})
					}
					return nil
				})
			})
		}
	}
}

// BenchmarkKeepPath: 10 MiB of lines through one call with sys.stderr
// replaced (merged keeps them all); reports the peak kept bytes and the
// heap in use, which must stay near the 64 KiB cap.
func BenchmarkKeepPath(b *testing.B) {
	devNull(b)
	line := benchLine()
	n := (10 << 20) / len(line)
	for b.Loop() {
		rt, err := New(Options{Platform: Linux, Python: Version{3, 12, 0}, Policy: "merged", NoTelemetry: true})
		if err != nil {
			b.Fatal(err)
		}
		rt.In.SetStderr(NewMemStream("StringIO"))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		peak := 0
		rt.Call(rt.Main, "execute", func() *NativeError {
			for i := 0; i < n; i++ {
				rt.Policy.Emit(rt.Main, Line{Seq: i, Level: Info, Bytes: line})
				peak = max(peak, rt.Main.call.kept.Len())
			}
			runtime.GC() // what the call holds, not garbage it made
			runtime.ReadMemStats(&after)
			return nil
		})
		b.ReportMetric(float64(peak), "peak-kept-bytes")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse)), "heap-growth-bytes")
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
