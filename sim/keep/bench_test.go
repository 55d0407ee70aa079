package keep

import (
	"bytes"
	"runtime"
	"testing"
)

// BenchmarkKeep measures Add with 120-byte lines on a Buffer that is cutting
// all the time, as in a call that logs far more than the cap.
func BenchmarkKeep(b *testing.B) {
	line := append(bytes.Repeat([]byte("x"), 119), '\n')
	var buf Buffer
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		buf.Add(line)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// TestTenMiBThroughOneBuffer pushes 10 MiB of lines (60 to 200 bytes) through
// one Buffer and requires the kept bytes, the bytes allocated and the heap in
// use to stay near the 64 KiB cap, not to grow with the traffic.
func TestTenMiBThroughOneBuffer(t *testing.T) {
	const traffic = 10 << 20
	line := append(bytes.Repeat([]byte("y"), 199), '\n')
	var b Buffer
	var before, after, afterGC runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	peak, passed, lines := 0, 0, 0
	for passed < traffic {
		size := 60 + lines*37%141
		b.Add(line[200-size:])
		passed += size
		lines++
		peak = max(peak, b.Len())
	}
	runtime.ReadMemStats(&after)
	runtime.GC()
	runtime.ReadMemStats(&afterGC)
	allocated := after.TotalAlloc - before.TotalAlloc
	heapGrowth := int64(afterGC.HeapInuse) - int64(before.HeapInuse)
	leftLines, leftBytes := b.LeftOut()
	t.Logf("%d lines (%d bytes) through one Buffer: peak kept %d bytes; now %d lines (%d bytes) kept, %d (%d) left out",
		lines, passed, peak, b.Count(), b.Len(), leftLines, leftBytes)
	t.Logf("allocated during the run: %d bytes in %d allocations; arena cap %d; heap in use %d -> %d bytes (after GC)",
		allocated, after.Mallocs-before.Mallocs, cap(b.arena), before.HeapInuse, afterGC.HeapInuse)
	runtime.KeepAlive(&b)

	if peak > MaxBytes {
		t.Errorf("peak kept %d bytes, over the %d-byte cap", peak, MaxBytes)
	}
	if b.Count()+leftLines != lines || b.Len()+leftBytes != passed {
		t.Errorf("kept + left out != added")
	}
	const near = 1 << 20 // a tenth of the traffic, 16x the cap
	if allocated > near {
		t.Errorf("allocated %d bytes for %d bytes of traffic: the Buffer copies more than once per line", allocated, passed)
	}
	if heapGrowth > near {
		t.Errorf("heap in use grew by %d bytes", heapGrowth)
	}
}
