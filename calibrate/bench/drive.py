"""Drives sinkbench: logjam.hpp's per-line cost against a raw fwrite on
/dev/null, a 64 KiB pipe and a one-page pipe drained by another process,
and a pty drained by a native thread, for each number of lines per binding
call, raw and logjam (and, when sinkbench_base is there, another commit's
header: calbench -base) interleaved REPS times; prints the median ns per
line of each, in wall time and in the writer thread's CPU time (system
time included: the write(2) calls; what a loaded machine inflates least),
what the header adds to a line (+ns) and the ratio raw / logjam (1.0x: as
fast as raw; higher is faster), side by side.

    PYTHONPATH=<dir with sinkbench> python3 drive.py [N [REPS [PER_CALL,...]]]
"""

import fcntl
import os
import pty
import statistics
import subprocess
import sys

import sinkbench as sb

try:
    import sinkbench_base as base
except ImportError:
    base = None

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 7
PER_CALL = [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [1, 10, 100]
BASE = os.environ.get("SINKBENCH_BASE", "base")


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
RUNS = [("raw", sb, 0), ("logjam", sb, 1)] + ([(BASE, base, 1)] if base else [])
out = {}
for kind in KINDS:
    for per_call in PER_CALL:
        got = {name: [] for name, _, _ in RUNS}
        for _ in range(REPS):
            restore = arrange(kind)
            try:
                for name, mod, mode in RUNS:
                    got[name].append(mod.run(mode, N, per_call))
            finally:
                restore()
        out[kind, per_call] = {name: [statistics.median(x[i] for x in got[name]) for i in (0, 1)] for name in got}

print("python %d.%d.%d: %d lines of 128 bytes a run, median of %d interleaved runs; ns per line; "
      "+ns and ratio: logjam against raw (ratio raw / logjam)" % (sys.version_info[:3] + (N, REPS)))
cols = ["raw"] + ([BASE] if base else []) + ["logjam"]
w = max(7, max(len(c) for c in cols) + 1)
half = "".join("%*s" % (w, c) for c in cols) + " %6s %6s" % ("+ns", "ratio")
print("%-14s %6s |%s |%s" % ("", "", ("wall" + " " * len(half))[:len(half)], ("CPU" + " " * len(half))[:len(half)]))
print("%-14s %6s |%s |%s" % ("fd 2", "lines", half, half))
print("%-14s %6s |%s |%s" % ("", "a call", " " * len(half), " " * len(half)))
for kind in KINDS:
    for per_call in PER_CALL:
        o = out[kind, per_call]
        row = []
        for i in (0, 1):
            r, lj = o["raw"][i], o["logjam"][i]
            row.append("".join("%*.0f" % (w, o[c][i]) for c in cols) + " %+6.0f %5.2fx" % (lj - r, r / lj))
        print("%-14s %6d |%s |%s" % (kind, per_call, row[0], row[1]))
