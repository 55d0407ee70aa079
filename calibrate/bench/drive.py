"""Drives sinkbench: logjam.hpp's per-line cost against a raw fwrite on
/dev/null, a 64 KiB pipe and a one-page pipe drained by another process,
and a pty drained by a native thread,
interleaved, REPS times; prints the median ns/line of each, in wall time and
in the writer thread's CPU time (system time included: the write(2) calls;
what a loaded machine cannot inflate), and the ratio raw / logjam (1.0x: as
fast as raw; higher is faster).

    PYTHONPATH=<dir with sinkbench> python3 drive.py [N [REPS [PER_CALL]]]
"""

import fcntl
import os
import pty
import statistics
import subprocess
import sys

import sinkbench as sb

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 7
PER_CALL = int(sys.argv[3]) if len(sys.argv) > 3 else 1


def arrange(kind):
    saved = os.dup(2)
    if kind == "/dev/null":
        fd = os.open("/dev/null", os.O_WRONLY)
    elif kind == "pty":
        master, fd = pty.openpty()
        import termios
        attrs = termios.tcgetattr(fd)
        attrs[1] &= ~termios.OPOST  # raw output: the line as written
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        sb.drain(master)
    else:
        # The pipe's reader is another process, as a parent reading its
        # child's stderr is: a reader in this process is an in-process
        # forwarder's to logjam, whose calls then keep every line (the
        # forwarder rule), which is not the cost of a line.
        r, fd = os.pipe()
        fcntl.fcntl(fd, 1031, 65536 if kind == "64 KiB pipe" else 4096)  # F_SETPIPE_SZ
        reader = subprocess.Popen(["cat"], stdin=r, stdout=subprocess.DEVNULL, close_fds=True)
        os.close(r)
    os.dup2(fd, 2)
    os.close(fd)

    def restore():
        os.dup2(saved, 2)
        os.close(saved)
        if kind.endswith("pipe"):
            reader.wait()
    return restore


KINDS = ["/dev/null", "64 KiB pipe", "one-page pipe", "pty"]
out = {}
for kind in KINDS:
    raw, lj = [], []
    for _ in range(REPS):
        restore = arrange(kind)
        try:
            raw.append(sb.run(0, N, PER_CALL))
            lj.append(sb.run(1, N, PER_CALL))
        finally:
            restore()
    out[kind] = [statistics.median(x[i] for x in raw) for i in (0, 1)] + [statistics.median(x[i] for x in lj) for i in (0, 1)]

print("python %d.%d.%d, %d lines of 128 bytes per run, %d interleaved runs (median), %d line(s) per binding call"
      % (sys.version_info[:3] + (N, REPS, PER_CALL)))
print("%-15s %10s %10s %8s | %10s %10s %8s" % ("fd 2", "raw wall", "logjam", "ratio", "raw CPU", "logjam", "ratio"))
for kind in KINDS:
    rw, rc, lw, lc = out[kind]
    print("%-15s %10.0f %10.0f %7.2fx | %10.0f %10.0f %7.2fx" % (kind, rw, lw, rw / lw, rc, lc, rc / lc))
