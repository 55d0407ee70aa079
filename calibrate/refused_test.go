package calibrate

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"logjam/sim"
)

// refusedProbe makes the kernel really refuse sys.stderr's write(2) (a
// pipe whose reader is closed, /dev/full, a full non-blocking pipe), writes
// a line, then points fd 2 at a file, writes another and prints whether
// the first was kept for it.
const refusedProbe = `import os, sys, fcntl, tempfile
how = sys.argv[1]
if how == "EPIPE":
    r, w = os.pipe(); os.close(r); os.dup2(w, 2)
elif how == "ENOSPC":
    os.dup2(os.open("/dev/full", os.O_WRONLY), 2)
else:
    r, w = os.pipe(); os.dup2(w, 2)
    fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_NONBLOCK)
    for size in (4096, 1):
        try:
            while True: os.write(2, b"." * size)
        except BlockingIOError:
            pass
try:
    sys.stderr.write("a\n")
    raised = "-"
except BaseException as e:
    raised = type(e).__name__
fd, path = tempfile.mkstemp()
os.dup2(fd, 2)
fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) & ~os.O_NONBLOCK)
sys.stderr.write("b\n"); sys.stderr.flush()
kept = open(path).read().startswith("a\n")
os.unlink(path)
sys.stdout.write("%s %s\n" % (raised, "kept" if kept else "gone"))
sys.stdout.flush()
os._exit(0)
`

// Real CPython meets a refused write on sys.stderr as the model does
// (sim.RefusedWriteError): the exception it raises, if any, and whether
// the BufferedWriter keeps the line for the next write. Every interpreter
// found (-short: python3 alone).
func TestRealSysStderrMeetsRefusedWritesAsTheModel(t *testing.T) {
	ins := Discover()
	if testing.Short() {
		ins = nil
		if in, err := Default(); err == nil {
			ins = append(ins, in)
		}
	}
	if len(ins) == 0 {
		t.Skip("no CPython here")
	}
	for _, in := range ins {
		for _, b := range []sim.Buffering{sim.Buffered, sim.Unbuffered} {
			for name, errno := range map[string]unix.Errno{"EPIPE": unix.EPIPE, "ENOSPC": unix.ENOSPC, "EAGAIN": unix.EAGAIN} {
				want := "- gone"
				if e := sim.RefusedWriteError(errno, b); e != nil {
					want = e.Type + map[bool]string{true: " kept", false: " gone"}[b == sim.Buffered]
				}
				args := []string{"-c", refusedProbe, name}
				if b == sim.Unbuffered {
					args = append([]string{"-u"}, args...)
				}
				cmd := exec.Command(in.Path, args...)
				cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PYTHONUNBUFFERED=") })
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("python %s %s %s: %v", in.Version, b, name, err)
					continue
				}
				if got := strings.TrimSpace(string(out)); got != want {
					t.Errorf("python %s, sys.stderr %s, %s: real %q, the model %q", in.Version, b, name, got, want)
				}
			}
		}
	}
}
