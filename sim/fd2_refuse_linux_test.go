package sim

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"

	"logjam/failpoints"
)

// drainedPipeOnFD2 points fd 2 at an empty 64 KiB pipe and returns what a
// function then reads of it; fd 2 is put back after the test.
func drainedPipeOnFD2(t *testing.T) func() []byte {
	t.Helper()
	p := pipeOnFD2(t, 65536)
	return func() []byte {
		_ = unix.SetNonblock(int(p.R.Fd()), true)
		var out []byte
		buf := make([]byte, 65536)
		for {
			n, err := unix.Read(int(p.R.Fd()), buf)
			if n <= 0 || err != nil {
				return out
			}
			out = append(out, buf[:n]...)
		}
	}
}

// Each write path meets a write(2) the kernel refused (the fd2-write-errno
// failpoint, first write only) as its real code does: fwrite gives the
// line up, logjam's write_all waits out EAGAIN and gives up the rest,
// sys.stderr.write raises (keeping its bytes when buffered).
func TestEachWritePathMeetsARefusedWrite(t *testing.T) {
	a, b := []byte("I first line\n"), []byte("I second line\n")
	for _, tc := range []struct {
		name, errno string
		buffering   Buffering
		write       func(rt *Runtime) *PyErr
		raised      string
		want        []byte // fd 2 after the two writes
	}{
		{name: "fwrite gives the refused line up", errno: "EIO",
			write: func(rt *Runtime) *PyErr { rt.FD2.WriteDirect(rt.Main, a); rt.FD2.WriteDirect(rt.Main, b); return nil },
			want:  b},
		{name: "fwrite gives a line up for EAGAIN too", errno: "EAGAIN",
			write: func(rt *Runtime) *PyErr { rt.FD2.WriteDirect(rt.Main, a); rt.FD2.WriteDirect(rt.Main, b); return nil },
			want:  b},
		{name: "write_all waits out EAGAIN", errno: "EAGAIN",
			write: func(rt *Runtime) *PyErr { rt.FD2.WriteAll(rt.Main, a); rt.FD2.WriteAll(rt.Main, b); return nil },
			want:  append(append([]byte{}, a...), b...)},
		{name: "write_all gives up a line refused for good", errno: "ENOSPC",
			write: func(rt *Runtime) *PyErr { rt.FD2.WriteAll(rt.Main, a); rt.FD2.WriteAll(rt.Main, b); return nil },
			want:  b},
		{name: "sys.stderr.write raises BrokenPipeError, its buffer keeps the line", errno: "EPIPE",
			write: func(rt *Runtime) *PyErr {
				err := rt.In.Original().Write(rt.Main, string(a))
				_ = rt.In.Original().Write(rt.Main, string(b))
				return err
			},
			raised: "BrokenPipeError", want: append(append([]byte{}, a...), b...)},
		{name: "buffered sys.stderr.write raises BlockingIOError on EAGAIN", errno: "EAGAIN",
			write: func(rt *Runtime) *PyErr {
				err := rt.In.Original().Write(rt.Main, string(a))
				_ = rt.In.Original().Write(rt.Main, string(b))
				return err
			},
			raised: "BlockingIOError", want: append(append([]byte{}, a...), b...)},
		{name: "unbuffered sys.stderr.write drops the text on EAGAIN", errno: "EAGAIN", buffering: Unbuffered,
			write: func(rt *Runtime) *PyErr {
				err := rt.In.Original().Write(rt.Main, string(a))
				_ = rt.In.Original().Write(rt.Main, string(b))
				return err
			},
			want: b},
		{name: "unbuffered sys.stderr.write raises OSError on EIO", errno: "EIO", buffering: Unbuffered,
			write: func(rt *Runtime) *PyErr {
				err := rt.In.Original().Write(rt.Main, string(a))
				_ = rt.In.Original().Write(rt.Main, string(b))
				return err
			},
			raised: "OSError", want: b},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := drainedPipeOnFD2(t)
			rt, err := New(Options{Platform: Linux, Python: Version{3, 12, 0}, Buffering: tc.buffering, NoTelemetry: true,
				Policy: func(*Runtime) (Policy, error) { return nopPolicy{}, nil }})
			if err != nil {
				t.Fatal(err)
			}
			fp := failpoints.NewScope()
			defer fp.Close()
			if err := fp.Enable(failpoints.FD2WriteErrno, `1*return("`+tc.errno+`")`); err != nil {
				t.Fatal(err)
			}
			raised := tc.write(rt)
			switch {
			case tc.raised == "" && raised != nil, tc.raised != "" && (raised == nil || raised.Type != tc.raised):
				t.Fatalf("raised %v, want %q", raised, tc.raised)
			}
			if got := read(); !bytes.Equal(got, tc.want) {
				t.Fatalf("fd 2 got %q, want %q", got, tc.want)
			}
		})
	}
}
