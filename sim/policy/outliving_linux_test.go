package policy

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"logjam/pipes"
	"logjam/sim"
)

// onForwardersPipe makes fd 2 a pipe whose read end this process holds (an
// in-process forwarder's, which never reads here), keeping a copy of the
// old fd 2 open as ipykernel and wurlitzer do; it returns the write end's
// reader and puts fd 2 back when the test ends.
func onForwardersPipe(t *testing.T, rt *sim.Runtime) (r *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(w.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := rt.FD2.Rearranged(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Dup2(saved, 2); _ = unix.Close(saved); r.Close() })
	return r
}

// A call that holds the GIL keeps its lines while fd 2 is a pipe whose
// reader is a thread of this process: that reader needs the GIL the call
// holds. With the pipe's reader elsewhere (a parent's), the call goes
// direct as merged's does.
func TestACallOnAForwardersPipeKeeps(t *testing.T) {
	rt, p := logjamOnDevNull(t)
	if !rt.Main.HoldsGIL() {
		t.Fatal("the main thread does not hold the GIL at start")
	}
	r := onForwardersPipe(t, rt)
	p.Enter(rt.Main)
	if p.call(rt.Main).direct {
		t.Fatal("a call holding the GIL went direct on an in-process forwarder's pipe: what the forwarder reads of it waits for the GIL, and a Fatal line's rescue cannot reach it")
	}
	r.Close() // the reader is gone from this process (as if only the parent held it)
	fd2a, fd2b, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer fd2a.Close()
	if err := unix.Dup2(int(fd2b.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	fd2b.Close()
	fd2a.Close() // a pipe whose reader lives elsewhere: none here
	if err := rt.FD2.Rearranged(); err != nil {
		t.Fatal(err)
	}
	p.Enter(rt.Main)
	if !p.call(rt.Main).direct {
		t.Fatal("a call on a pipe with no reader in this process did not go direct")
	}
}

// A Fatal line on a forwarder's pipe writes what the pipe holds, the kept
// lines and the fatal line, in that order, to the descriptor still open on
// what fd 2 was when the sink was installed (with none, the fatal path is
// the one to fd 2: TestASinkInstalledUnderIPyKernelsCaptureFindsItsSavedCopy
// checks that none is found).
func TestAFatalLineOnAForwardersPipeGoesToTheOutlivingCopy(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "fd2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rt, p := logjamOnFD2(t, f)
	r := onForwardersPipe(t, rt) // f stays open: the forwarder's saved copy
	if _, err := unix.Write(2, []byte("in the pipe before the call\n")); err != nil {
		t.Fatal(err)
	}
	p.Enter(rt.Main)
	p.Emit(rt.Main, sim.Line{Seq: 1, Level: sim.Error, Bytes: []byte("E context 1\n")})
	p.Emit(rt.Main, sim.Line{Seq: 2, Level: sim.Error, Bytes: []byte("E context 2\n")})
	p.Emit(rt.Main, sim.Line{Seq: 3, Level: sim.Fatal, Bytes: []byte("F the fatal line\n")})
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	want := "in the pipe before the call\nE context 1\nE context 2\nF the fatal line\n"
	if string(got) != want {
		t.Fatalf("the outliving copy holds %q, want %q", got, want)
	}
	if n, err := pipes.Queued(int(r.Fd())); err != nil || n > 0 {
		t.Fatalf("the fatal path left %d bytes in the forwarder's pipe (%v)", n, err)
	}
}

// A sink installed when fd 2 is a forwarder's pipe already (a notebook's
// kernel captured it before the module was imported) takes the descriptor
// sys.stderr names as its _original_stdstream_copy (ipykernel's OutStream)
// for what fd 2 was; without one there is no outliving copy, and the fatal
// path writes to fd 2.
func TestASinkInstalledUnderIPyKernelsCaptureFindsItsSavedCopy(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "fd2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rt, p := logjamOnFD2(t, f)
	r := onForwardersPipe(t, rt)
	copyFD, err := unix.Dup(int(f.Fd())) // the OutStream's own copy of the old fd 2
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(copyFD)
	out := sim.NewMemStream("OutStream")
	rt.In.SetStderr(out)

	rt.ImportModule(rt.Main) // no _original_stdstream_copy yet: the record is the pipe
	if rd := p.out.forwarderReader(); rd != int(r.Fd()) || p.out.copyOf(rd) != -1 {
		t.Fatalf("installed under a capture with nothing naming the old fd 2, the sink found an outliving copy (reader %d, copy %d)", rd, p.out.copyOf(rd))
	}
	out.SetOriginalStdstreamCopy(copyFD)
	rt.ImportModule(rt.Main)
	if rd := p.out.forwarderReader(); p.out.copyOf(rd) < 0 {
		t.Fatal("installed under ipykernel's capture, the sink did not take the OutStream's _original_stdstream_copy for what fd 2 was")
	}
}
