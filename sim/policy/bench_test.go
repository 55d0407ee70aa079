package policy

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"logjam/pipes"
	"logjam/sim"
)

// Sink throughput, side by side in one run (figures for notes; no test
// asserts a time):
//
//	go test -run '^$' -bench DirectWrite -benchtime 200000x ./sim/policy/
//	go test -run '^$' -bench KeepPath -benchtime 3x ./sim/policy/

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
				mk, err := ByName(pol)
				if err != nil {
					b.Fatal(err)
				}
				rt, err := sim.New(sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}, Policy: mk, NoTelemetry: true})
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(line)))
				rt.Call(rt.Main, "execute", func() *sim.NativeError {
					for b.Loop() {
						rt.Policy.Emit(rt.Main, sim.Line{Seq: 1, Level: sim.Info, Bytes: line})
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
		mk, _ := ByName("merged")
		rt, err := sim.New(sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}, Policy: mk, NoTelemetry: true})
		if err != nil {
			b.Fatal(err)
		}
		rt.In.SetStderr(sim.NewMemStream("StringIO"))
		k := rt.Policy.(interface{ Unwrap() sim.Policy }).Unwrap().(interface{ base() *kit }).base()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		peak := 0
		rt.Call(rt.Main, "execute", func() *sim.NativeError {
			for i := 0; i < n; i++ {
				rt.Policy.Emit(rt.Main, sim.Line{Seq: i, Level: sim.Info, Bytes: line})
				peak = max(peak, k.call(rt.Main).kept.Len())
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
