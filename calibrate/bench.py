"""Per-line cost of each sink policy against a raw fwrite to fd 2, with the
same extension, on /dev/null, a drained 64 KiB pipe and a drained one-page
pipe. One line per binding call (outermost entry, one log line, outermost
exit), the line 128 bytes. Prints ns per line and the ratio raw / policy
(1.0x = as fast as raw; higher is faster), in wall time and in the writer
thread's CPU time.

    PYTHONPATH=<dir with logjamext> python3 bench.py [N [REPS]]

PYTHONUNBUFFERED is taken as set by the caller (calbench sets or unsets it).
"""

import fcntl
import os
import sys

import logjamext as ext

N = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 9
POLICIES = ["pystderr", "fd2", "buffered", "adaptive", "merged", "logjam"]
MSG = 128 - 55  # message bytes of a 128-byte line


def arrangement(kind):
    """Points fd 2 (and so sys.stderr) at kind; returns a function that
    restores it."""
    saved = os.dup(2)
    if kind == "/dev/null":
        fd = os.open("/dev/null", os.O_WRONLY)
        os.dup2(fd, 2)
        os.close(fd)
    else:
        size = {"pipe 64 KiB": 65536, "pipe 4 KiB": 4096}[kind]
        r, w = os.pipe()
        fcntl.fcntl(w, 1031, size)  # F_SETPIPE_SZ
        os.dup2(w, 2)
        os.close(w)
        ext.drain(r)  # a native reader: no GIL needed to drain

    def restore():
        sys.stderr.flush()
        os.dup2(saved, 2)  # the pipe's last writer closes: the reader ends
        os.close(saved)
    return restore


def measure(kind, policy):
    restore = arrangement(kind)
    try:
        raw = policy == "raw"
        ext.setup("fd2" if raw else policy, -1)
        ext.bench(N // 10, MSG, raw)  # warm-up
        return ext.bench(N, MSG, raw)
    finally:
        restore()


def main():
    kinds = ["/dev/null", "pipe 64 KiB", "pipe 4 KiB"]
    res, cpus = {}, {}
    # interleaved, minimum of REPS: robust to a loaded machine's spikes
    for _ in range(REPS):
        for kind in kinds:
            for p in ["raw"] + POLICIES:
                wall, cpu = measure(kind, p)
                res[kind, p] = min(wall, res.get((kind, p), wall))
                cpus[kind, p] = min(cpu, cpus.get((kind, p), cpu))
    out = sys.stdout
    out.write("python %s, PYTHONUNBUFFERED=%s, %d lines of 128 bytes, one line per call, min of %d interleaved runs\n"
              % (sys.version.split()[0], os.environ.get("PYTHONUNBUFFERED", ""), N, REPS))
    for title, tab in (("wall time per line (what the caller waits)", res),
                       ("writer-thread CPU per line (less sensitive to a loaded machine; excludes waiting)", cpus)):
        out.write(title + "\n")
        out.write("%-9s" % "policy" + "".join("| %-24s" % k for k in kinds) + "\n")
        for p in ["raw"] + POLICIES:
            cells = []
            for k in kinds:
                ns = tab[k, p]
                cells.append("| %7.0f ns  %5.2fx raw   " % (ns, tab[k, "raw"] / ns))
            out.write("%-9s" % p + "".join(cells) + "\n")


main()
