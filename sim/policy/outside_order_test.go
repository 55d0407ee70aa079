package policy

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"logjam/sim"
)

// Outside a call, a logjam line waits behind the process-wide kept lines a
// flush has taken and not yet written, as it waits behind those still kept:
// the flush lets the GIL go before it takes the stdio lock, so a line that
// went to fd 2 meanwhile could overtake the flushed ones (REORDERED).
func TestAnOutsideLineWaitsBehindLinesAFlushHasTaken(t *testing.T) {
	rt, p := logjamOnDevNull(t)
	line := func(seq int) sim.Line {
		return sim.Line{Seq: seq, Level: sim.Info, Bytes: []byte("I 00:00:01.000001 executorch:module.cpp:58] outside a call\n")}
	}
	kept := func() int {
		p.mu.Acquire(rt.Main)
		defer p.mu.Release(rt.Main)
		return p.outside.Count()
	}
	p.Emit(rt.Main, line(1))
	if n := kept(); n != 0 {
		t.Fatalf("with fd 2 taking everything and nothing kept, a line outside a call was kept (%d kept)", n)
	}
	// A flush has taken the kept lines (flushOutside) and not yet written them.
	p.mu.Acquire(rt.Main)
	p.flushing++
	p.mu.Release(rt.Main)
	p.Emit(rt.Main, line(2))
	if n := kept(); n != 1 {
		t.Fatalf("a line outside a call went to fd 2 while a flush had taken earlier lines and not yet written them (%d kept, want 1)", n)
	}
}

// A thread's line kept outside a call (here behind a flush in flight) goes
// before the lines of its next call: that call keeps them (not direct)
// while the thread's own lines wait in the process-wide keep, and its
// outermost exit writes the process-wide lines first. Once a flush wrote
// them, a call goes direct again. The header pins the same rule in
// Outside.ALineKeptOutsideACallGoesBeforeTheThreadsNextCall.
func TestALineKeptOutsideACallGoesBeforeTheThreadsNextCall(t *testing.T) {
	rt, p := logjamOnDevNull(t)
	line := sim.Line{Seq: 1, Level: sim.Info, Bytes: []byte("I 00:00:01.000001 executorch:module.cpp:58] outside a call\n")}
	tk := p.takeOutside(rt.Main) // a flush in flight (of nothing kept yet)
	p.mu.Acquire(rt.Main)
	p.flushing++ // takeOutside counts only a non-empty take
	p.mu.Release(rt.Main)
	p.Emit(rt.Main, line)
	p.Enter(rt.Main)
	if p.call(rt.Main).direct {
		t.Fatal("a call went direct while its thread's line logged outside a call was still kept: its lines would reach fd 2 first (REORDERED)")
	}
	p.mu.Acquire(rt.Main)
	p.flushing--
	p.mu.Release(rt.Main)
	tk = p.takeOutside(rt.Main)
	p.flushed(rt.Main, tk)
	p.Enter(rt.Main)
	if !p.call(rt.Main).direct {
		t.Fatal("once a flush wrote the thread's kept lines, its next call did not go direct")
	}
}

// logjamOnDevNull is a logjam sink of a runtime of its own, with fd 2
// /dev/null (it takes everything) until the test ends.
func logjamOnDevNull(t *testing.T) (*sim.Runtime, *logjamSink) {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { null.Close() })
	return logjamOnFD2(t, null)
}

// logjamOnFD2 is a logjam sink of a runtime of its own, installed with fd
// 2 a copy of f until the test ends.
func logjamOnFD2(t *testing.T, f *os.File) (*sim.Runtime, *logjamSink) {
	t.Helper()
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(f.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Dup2(saved, 2); _ = unix.Close(saved) })
	mk, err := ByName("logjam")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sim.New(sim.Options{Platform: sim.Linux, Python: sim.Version{Major: 3, Minor: 12}, Policy: mk, NoTelemetry: true})
	if err != nil {
		t.Fatal(err)
	}
	return rt, rt.Policy.(interface{ Unwrap() sim.Policy }).Unwrap().(*logjamSink)
}
