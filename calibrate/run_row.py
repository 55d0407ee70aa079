"""Play one row of docs/SCENARIOS.md against a real CPython and logjamext.

    python3 run_row.py ROW POLICY        (logjamext importable: PYTHONPATH)

Telemetry goes, as cmd/simrt's does, to the descriptor named in
WATCHDOG_TELEMETRY_FD (or fd 3 when open), one JSON object a line: "start",
"line" (from the extension), "exception", "handler", "signal", "capture",
"mark" (the parent's cues: "sigint", "fd2-resume"), "callback", "exit".
stdout ends with "done" when the script completes. fd 2 is the system under
test: nothing but the sinks writes there.

Synchronisation is by handshakes and by watching /proc/self/task/TID
(syscall, wchan) from native threads; no sleep creates an interleaving.
"""

import fcntl
import json
import os
import select
import signal
import sys
import threading

import logjamext as ext

ROW, POLICY = sys.argv[1], sys.argv[2]
TEL = int(os.environ.get("WATCHDOG_TELEMETRY_FD", "3"))
try:
    if fcntl.fcntl(TEL, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
        TEL = -1
except OSError:
    TEL = -1


def emit(ev, **fields):
    fields["ev"] = ev
    ext.emit(json.dumps(fields))


def mark(name, **fields):
    emit("mark", name=name, **fields)


ext.setup(POLICY, TEL)
PY = "%d.%d.%d" % sys.version_info[:3]

# ---------------------------------------------------------------- streams

CAPTURES = []


class Capture:
    """An in-memory sys.stderr (StringIO under capsys) recording every
    write offered to it, with optional faults."""

    def __init__(self, name="StringIO", fault=None, once=True):
        self.name, self.fault, self.once = name, fault, once
        self.buf, self.attempts = [], []
        CAPTURES.append(self)

    def write(self, text):
        fault = self.fault
        if fault and self.once:
            self.fault = None
        if fault == "oserror":
            self.attempts.append({"text": text, "written": 0, "raised": "OSError"})
            raise OSError(5, "Input/output error")
        if fault in ("before", "half"):
            n = len(text) // 2 if fault == "half" else 0
            self.buf.append(text[:n])
            self.attempts.append({"text": text, "written": n, "raised": "KeyboardInterrupt"})
            raise KeyboardInterrupt
        if fault == "slow":
            # a slow stream: its write sleeps with the GIL released (here:
            # until B has blocked on L or got it, so the window is certain)
            import time
            while not ext.b_progress():
                time.sleep(0.001)
            self.fault = "slow"
        if fault == "wait-signal":
            # blocks (GIL released) until a signal; the handler raises
            r, w = os.pipe()
            ext.watch(ext.tid(), "0 ", "pipe_read", json.dumps({"ev": "mark", "name": "sigint"}))
            try:
                os.read(r, 1)
            except BaseException as e:
                self.attempts.append({"text": text, "written": 0, "raised": type(e).__name__})
                raise
            finally:
                os.close(r)
                os.close(w)
        self.buf.append(text)
        self.attempts.append({"text": text, "written": len(text)})
        return len(text)

    def flush(self):
        pass

    def report(self):
        return {"stream": self.name, "text": "".join(self.buf), "attempts": self.attempts}


# ---------------------------------------------------------------- helpers

def tname():
    return threading.current_thread().name


def call(name, fn, *args):
    """A binding call; the extension reports the exception it raises to the
    caller (natively: a pending SIGINT handler could otherwise run in this
    except clause first), and the script prints it."""
    try:
        return ext.call_named(name, fn, *args)
    except (Exception, KeyboardInterrupt) as e:
        print("%s: caught %s: %s" % (tname(), type(e).__name__, e), flush=True)


def msg(n):
    return (b"execute step " + b"x" * n)[:n]


def counting_handler(sig, frame):
    emit("handler", signal="SIGINT", handler="python")
    raise KeyboardInterrupt


def install_sigint():
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, None):
        return "ignored"
    signal.signal(signal.SIGINT, counting_handler)
    ext.hook_sigint()
    return "python"


# ---------------------------------------------------------------- rows

def row_D1():
    # fd 2 is a one-page pipe the parent does not read yet; fill it, so A's
    # write of its log line blocks until the watcher's cue (see watch_d1).
    fill_fd2()
    b_ready = threading.Event()
    tids = {}

    def a():
        b_ready.wait()
        ext.watch_d1(ext.tid(), tids["B"], json.dumps({"ev": "mark", "name": "fd2-resume"}))
        call("load_method", ext.backend_load_fail, None)

    def b():
        tids["B"] = ext.tid()
        b_ready.set()
        ext.wait_a_locked()
        call("execute", ext.backend_execute)

    ta, tb = threading.Thread(target=a, name="A"), threading.Thread(target=b, name="B")
    ta.start(), tb.start()
    ta.join(), tb.join()


def row_D2():
    sys.stderr = Capture(name="slow StringIO", fault="slow")
    b_ready = threading.Event()

    def a():
        b_ready.wait()
        call("load_method", ext.backend_load_fail, None)

    def b():
        b_ready.set()
        ext.wait_a_locked()
        call("execute", ext.backend_execute)

    ta, tb = threading.Thread(target=a, name="A"), threading.Thread(target=b, name="B")
    ta.start(), tb.start()
    ta.join(), tb.join()


class FD2Capture:
    """ipykernel / wurlitzer: fd 2 a new one-page pipe (dup2), the old fd 2
    kept, a daemon forwarder thread: os.read(pipe, chunk), then the text to
    a Python stream (needs the GIL), then the bytes to the saved fd.

    barrier: each read waits, as the model's forwarder, until every thread
    that called ext.barrier_thread() waits for something only the process
    can end, or the capture is closing (the schedule rows); without it the
    forwarder reads whenever bytes arrive (the catalogued rows)."""

    def __init__(self, style, capacity=4096, chunk=None, barrier=False):
        self.barrier = barrier
        if barrier:
            ext.barrier_thread()
        self.chunk = chunk or (1000 if style == "ipykernel" else 1024)
        if style == "ipykernel":
            self.sink = Capture(name="OutStream")
            sys.stderr = self.sink
        else:
            self.sink = Capture(name="wurlitzer sink")
        r, w = os.pipe()
        fcntl.fcntl(w, 1031, capacity)  # F_SETPIPE_SZ
        self.saved = os.dup(2)
        if style == "ipykernel":
            self.sink._original_stdstream_copy = self.saved  # as ipykernel's OutStream keeps it
        os.dup2(w, 2)
        os.close(w)
        self.r = r
        self.t = threading.Thread(target=self.forward, name=style + " forwarder", daemon=True)
        self.t.start()
        emit("capture-fd2", style=style, chunk=self.chunk, pipe=capacity, forwarder=self.t.name)

    def forward(self):
        while True:
            if self.barrier:
                b = ext.read_on_barrier(self.r, self.chunk)
            else:
                b = os.read(self.r, self.chunk)
            if not b:
                return
            self.sink.write(b.decode("utf-8", "backslashreplace"))
            while b:
                b = b[os.write(self.saved, b):]

    def close(self):
        if self.barrier:
            ext.capture_closing()
        os.dup2(self.saved, 2)
        self.t.join()
        os.close(self.r)
        os.close(self.saved)


def row_D3():
    call("execute", ext.execute_pool, 2, 8, 73)


def row_D4():
    c = FD2Capture("wurlitzer")
    call("execute", ext.execute_pool, 2, 64, 73)
    c.close()


def row_D5():
    call("execute", ext.execute_logging, "I", 2, 73, -1)
    ext.hold_sink_lock()  # T1 holds the sink's own lock until the fork has begun
    import warnings
    warnings.simplefilter("ignore", DeprecationWarning)  # 3.12's "multi-threaded, use of fork()" on fd 2
    pid = os.fork()
    if pid == 0:
        # The child's hang is bounded: SIGALRM's default action ends it.
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(2)
        call("execute", ext.execute_logging, "I", 1, 73, -1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    ext.join_sink_holder()
    if status != 0:
        # The model's parent waits for a hung child for ever: so does this
        # one, once it has reaped it (the row's deadline ends it: HANG).
        emit("exception", thread=tname(), type="ChildProcessError", text="the forked child ended with status %d" % status)
        threading.Event().wait()


def row_P1():
    c = FD2Capture("ipykernel")
    call("execute", ext.execute_logging, "I", 128, 73, -1)
    c.close()


def row_P2():
    c = FD2Capture("wurlitzer")
    call("execute", ext.execute_logging, "I", 128, 73, -1)
    c.close()


def row_P3():
    call("execute", ext.execute_paced, "I", 240, 145, 0, 300, 0, 0)


def row_P5():
    call("execute", ext.execute_paced, "I", 20, 175, 25, 300, 0, 1)


def row_P6():
    c = FD2Capture("ipykernel")
    ext.execute_logging("I", 128, 73, -1)  # a destructor, outside any call, GIL held
    c.close()


def row_F4():
    def body():
        for i in range(3):
            ext.log("E", "vendor_backend.cpp", 200 + i, b"context %d" % i)
        ext.execute_paced("E", 20, 175, 25, 300, 1, 2)
    call("execute", body)


def fill_fd2():
    fl = fcntl.fcntl(2, fcntl.F_GETFL)
    fcntl.fcntl(2, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    line = b"filler " + b"." * 56 + b"\n"  # 64 bytes: 64 of them fill a page exactly
    try:
        while True:
            os.write(2, line)
    except BlockingIOError:
        pass
    fcntl.fcntl(2, fcntl.F_SETFL, fl)


def captured(n, size, fault=None, once=True):
    sys.stderr = Capture(fault=fault, once=once)
    call("execute", ext.execute_logging, "I", n, size - 55, -1)


def row_C1():
    captured(5, 120)


def row_C2():
    captured(5, 120, "oserror", once=False)  # every write raises


def row_C4():
    captured(5, 120, "oserror")  # the first write raises, then it works


def row_C3():
    captured(1600, 128)


def row_I1():
    install_sigint()
    call("execute", ext.execute_logging, "I", 5, 73, 3)


def row_I2():
    install_sigint()
    ext.watch(ext.tid(), "1 ", "pipe_write", json.dumps({"ev": "mark", "name": "sigint"}) + "\n" + json.dumps({"ev": "mark", "name": "fd2-pause", "ms": 200}))
    call("execute", ext.execute_logging, "I", 48, 73, -1)


def logging_handler(sig, frame):
    emit("handler", signal="SIGINT", handler="python")
    print("SIGINT received: shutting down", file=sys.stderr)  # a graceful-shutdown flag: no raise


def row_I8():
    # I2 with a handler that logs and returns: it runs inside the blocked
    # write's EINTR path, where sys.stderr's own write is under way.
    if signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, None):
        signal.signal(signal.SIGINT, logging_handler)
        ext.hook_sigint()
    ext.watch(ext.tid(), "1 ", "pipe_write", json.dumps({"ev": "mark", "name": "sigint"}) + "\n" + json.dumps({"ev": "mark", "name": "fd2-pause", "ms": 200}))
    call("execute", ext.execute_logging, "I", 48, 73, -1)


def row_I7():
    # I2 with a second SIGINT: the watcher asks for one each time the main
    # thread sleeps in a new write(2) on the stalled pipe, then for fd 2 to
    # resume at the next new wait or once the call is over.
    install_sigint()
    ext.watch_i7(ext.tid())
    try:
        call("execute", ext.execute_logging, "I", 48, 73, -1)
    finally:
        ext.call_over()


def row_I3():
    install_sigint()
    captured(5, 120, "before")


def row_I4():
    install_sigint()
    captured(5, 120, "half")


def row_I5():
    print("SIGINT handler: " + install_sigint(), flush=True)
    captured(5, 120, "before")


def row_I6():
    install_sigint()
    captured(5, 120, "wait-signal")


def row_F1():
    def body():
        for i in range(3):
            ext.log("E", "xnnpack_backend.cpp", 200 + i, b"delegate error %d" % i)
        ext.abort()
    call("execute", body)


def row_F2():
    def body():
        for i in range(3):
            ext.log("E", "vendor_backend.cpp", 200 + i, b"context %d" % i)
        ext.block_forever()
    call("execute", body)


def row_F3():
    sys.stderr = Capture()

    def body():
        for i in range(3):
            ext.log("E", "method.cpp", 100 + i, b"context %d" % i)
        ext.log("F", "method.cpp", 110, b"Fatal: inconsistent state")
    call("execute", body)


def row_F10():
    sys.stderr = Capture()
    # A destructor: 2 lines outside any call (GIL held), kept process-wide
    # for the capture; the crash handler interrupts the 2nd (SIGTERM).
    ext.arm_crash(2)
    ext.execute_logging("I", 2, 73, -1)


def row_F5():
    sys.stderr = Capture()
    # Another thread's destructor: 2 lines outside any call (GIL held),
    # kept process-wide for the capture.
    t = threading.Thread(target=ext.execute_logging, args=("I", 2, 73, -1), name="T1")
    t.start()
    t.join()

    def body():
        for i in range(3):
            ext.log("E", "method.cpp", 100 + i, b"context %d" % i)
        ext.log("F", "method.cpp", 110, b"Fatal: inconsistent state")
    call("execute", body)


def forwarded_context_then_fatal(style):
    FD2Capture(style, barrier=True)  # after the import: the sink saw fd 2 the parent's
    context_then_fatal()


def context_then_fatal():
    """F6-F9's call: 3 lines of context, then a Fatal line (the runtime aborts)."""
    def body():
        for i in range(3):
            ext.log("E", "vendor_backend.cpp", 200 + i, b"context %d" % i)
        ext.log("F", "vendor_backend.cpp", 210, b"Fatal: delegate state corrupt")
    call("execute", body)


def imported_under_capture_then_fatal(style):
    FD2Capture(style, barrier=True)
    ext.setup(POLICY, TEL)  # the module imported now: the sink installed with fd 2 the pipe already
    context_then_fatal()


def row_F8():
    imported_under_capture_then_fatal("ipykernel")


def row_F9():
    imported_under_capture_then_fatal("wurlitzer")


def row_F6():
    forwarded_context_then_fatal("wurlitzer")


def row_F7():
    forwarded_context_then_fatal("ipykernel")


def row_U1():
    sys.stderr = Capture()
    data = b"\xff" * 128

    def body():
        ident = data[4:8]
        ext.log("E", "program.cpp", 170, b"Program identifier '" + ident + b"' != expected 'ET12'")
        ext.fail("RuntimeError", b"Failed to load program from buffer, error: 0x23")
    call("_load_program_from_buffer", body)


U2_PATH = "/tmp/" + "模型文件" * 20 + ".pte"


def row_U2():
    p = U2_PATH.encode()

    def body():
        ext.log("E", "file_data_loader.cpp", 93, b"Failed to open " + p + b": No such file or directory")
        ext.fail("RuntimeError", b"Failed to create loader from file " + p + b", error: 0x22")
    call("loader_from_file", body)


def row_U3():
    cjk = "错" * 84
    msgs = ["x" + cjk, cjk, cjk, cjk, cjk]

    def body():
        for m in msgs:
            ext.log("E", "xnnpack_backend.cpp", 300, m.encode())
        ext.fail("RuntimeError", b"Execution failed: 0x1")
    call("execute", body)


def row_T1():
    looping_daemons(["D0", "D1"], lines=4, size=73)


def looping_daemons(names, lines, size):
    # daemon threads loop through calls (lines each) while the interpreter
    # exits; the script ends once each has made one call. Finalization
    # starts once each daemon waits again (the last atexit callback: the
    # model's barrier, ext.settle_daemons), so no daemon's write is cut off
    # by the exit between letting the GIL go and writing.
    import atexit
    started, tids = [], []
    atexit.register(ext.settle_daemons, tids)  # registered first: run last

    def daemon(ev):
        tids.append(ext.tid())
        first = True
        while True:
            call("execute", ext.execute_logging, "I", lines, size, -1)
            if first:
                first = False
                ev.set()

    for name in names:
        ev = threading.Event()
        threading.Thread(target=daemon, args=(ev,), name=name, daemon=True).start()
        started.append(ev)
    for ev in started:
        ev.wait()


# ---------------------------------------------------------------- random-found rows
# RF1-RF4: the schedule (LOGJAM_SCHEDULE, scenario/schedule's JSON) played
# as sim/programs/random.go plays it: fd 2 captured or not, sys.stderr, the
# threads' calls (natively, back to back: ext.run_calls), the lines outside
# any call, the capture closed, daemon threads at exit. A schedule using
# anything else is refused (exit 2): only what the rows need is played.

PLAYED = {"kind", "policy", "platform", "python", "buffering", "sink"}
PLAYED_SINK = {"fd2", "stderr", "threads", "outside", "daemons"}
PLAYED_CALL = {"backend", "lines", "size", "level", "cjk", "wait_for"}


def refuse(what):
    print("run_row.py: schedule: %s is not played for real" % what, flush=True)
    sys.exit(2)


def row_R():
    sched = json.loads(os.environ["LOGJAM_SCHEDULE"])
    for k in set(sched) - PLAYED:
        refuse(k)
    k = sched["sink"]
    for key in set(k) - PLAYED_SINK:
        refuse(key)
    fd2 = k["fd2"]
    capture = None
    if fd2["kind"] in ("ipykernel", "wurlitzer"):
        capture = FD2Capture(fd2["kind"], fd2.get("capacity", 4096), fd2.get("chunk"), barrier=True)
    elif fd2["kind"] != "file" or set(fd2) - {"kind"}:
        refuse("fd2 " + json.dumps(fd2))
    st = k["stderr"]
    if st["kind"] == "captured":
        sys.stderr = Capture()
    elif st["kind"] == "oserror" and st.get("k", 1) == 1:
        sys.stderr = Capture(fault="oserror", once=False)  # every write raises
    elif st["kind"] != "original":
        refuse("stderr " + json.dumps(st))
    threads = k["threads"]
    for t in threads:
        if set(t) - {"calls"}:
            refuse("a thread's " + ",".join(sorted(set(t) - {"calls"})))
        for c in t["calls"] or []:
            if set(c) - PLAYED_CALL:
                refuse("a call's " + ",".join(sorted(set(c) - PLAYED_CALL)))
    tids = [ext.tid()] + [0] * (len(threads) - 1)
    started = [threading.Event() for _ in threads]

    def calls(i):
        return [(c["backend"], c["lines"], c["size"], c["level"], bool(c.get("cjk")),
                 tids[c["wait_for"] - 1] if c.get("wait_for") else 0)
                for c in threads[i]["calls"] or []]

    def run(i):
        tids[i] = ext.tid()
        if capture:
            ext.barrier_thread()
        started[i].set()
        ext.run_calls(False, calls(i), [])

    ts = []
    for i in range(1, len(threads)):
        t = threading.Thread(target=run, args=(i,), name="T%d" % i)
        t.start()
        started[i].wait()
        ts.append(t)
    askers = [tids[i] for i in range(1, len(threads)) if threads[i]["calls"]]
    ext.run_calls(True, calls(0), askers)
    for t in ts:
        t.join()
    ext.log_outside(k.get("outside", 0), 73)  # sim.Filler(i, 73): a 128-byte line
    if capture:
        capture.close()
    if k.get("daemons"):
        daemons_at_exit(k["daemons"])


def daemons_at_exit(n):
    # as T1, with the model's daemon names and 3 lines of 80 bytes a call
    looping_daemons(["daemon-%d" % (i + 1) for i in range(n)], lines=3, size=80)


row_RF1 = row_RF2 = row_RF3 = row_RF4 = row_R


# ---------------------------------------------------------------- lazy init
# A pure-Python replica of torch.cuda._lazy_call / _lazy_init in four
# variants (docs/FACTS.md). A hang is a real self-deadlock on a non-reentrant
# lock: proven from its wait state (calibrate/waitfor.go).

class Lazy:
    def __init__(self, variant):
        self.variant = variant
        self.lock = threading.Lock()
        self.initialized = False
        self.queue = []
        self.tls = threading.local()
        self.ran = set()

    def is_initializing(self):
        return getattr(self.tls, "is_initializing", False)

    def run(self, cb, why):
        emit("callback", id=cb.cb_id, name=cb.cb_id, thread=tname(), variant=self.variant, path=why)
        self.ran.add(cb.cb_id)
        cb()

    def lazy_call(self, cb, pause=None):
        v = self.variant
        if v != "old":
            if self.initialized:
                return self.run(cb, "fast path")
            if v in ("norace", "fixed") and self.is_initializing():
                return self.run(cb, "draining thread")
        if pause:
            pause()
        if v in ("old", "initfast"):
            with self.lock:
                if self.initialized:
                    self.run(cb, "under the lock")
                else:
                    self.queue.append(cb)
            return
        if v == "norace":
            with self.lock:  # queued without re-checking
                self.queue.append(cb)
            return
        with self.lock:  # fixed
            run_now = self.initialized
            if not run_now:
                self.queue.append(cb)
        if run_now:
            self.run(cb, "after the lock")

    def lazy_init(self):
        if self.initialized or self.is_initializing():
            return
        with self.lock:
            if self.initialized:
                return
            self.tls.is_initializing = True
            try:
                for cb in self.queue:
                    self.run(cb, "drain")
                self.queue = []
            finally:
                self.tls.is_initializing = False
            self.initialized = True


def cb(name, fn):
    fn.cb_id = name
    return fn


def variant():
    return os.environ.get("LOGJAM_VARIANT", "old")


def row_L1():
    lz = Lazy(variant())
    lz.lazy_init()

    def set_rng_state():
        lz.lazy_call(cb("set_rng_state", lambda: None))
    lz.lazy_call(cb("lambda", set_rng_state))


def row_L2():
    lz = Lazy(variant())

    def manual_seed():
        lz.lazy_call(cb("manual_seed", lambda: None))
    lz.lazy_call(cb("lambda", manual_seed))
    lz.lazy_init()


def row_L3():
    lz = Lazy(variant())
    lz.lazy_call(cb("seed", lambda: None))
    a_passed, b_done = threading.Event(), threading.Event()

    def set_rng_state():
        lz.lazy_call(cb("set_rng_state", lambda: None))

    def pause():  # A has passed the fast-path checks: B initializes, drains
        a_passed.set()
        b_done.wait()

    def a():
        lz.lazy_call(cb("lambda", set_rng_state), pause=pause)

    def b():
        a_passed.wait()
        lz.lazy_init()
        b_done.set()

    ta, tb = threading.Thread(target=a, name="A"), threading.Thread(target=b, name="B")
    ta.start(), tb.start()
    ta.join(), tb.join()


# ---------------------------------------------------------------- main

def main():
    sig = "python"
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        sig = "ignored"
    emit("start", pid=os.getpid(), policy=POLICY, platform="linux", python=PY, fd2=fd2_kind(),
         sigint=sig, real=True, unbuffered=bool(os.environ.get("PYTHONUNBUFFERED")),
         stderr="unbuffered" if os.environ.get("PYTHONUNBUFFERED") else "buffered",
         stderr_buffer=type(sys.stderr.buffer).__name__ if hasattr(sys.stderr, "buffer") else "")
    fn = globals().get("row_" + ROW)
    if fn is None:
        print("unknown row " + ROW, flush=True)
        sys.exit(2)
    try:
        fn()
    except KeyboardInterrupt as e:  # a Ctrl-C that escaped the script's own calls
        emit("exception", thread=tname(), type="KeyboardInterrupt", text=str(e), escaped=True)
    finish()


def finish():
    try:
        ext.flush_outside()
    except BaseException as e:  # an atexit callback's exception is reported
        emit("exception", thread=tname(), call="atexit", type=type(e).__name__, text=str(e))
    for _ in range(ext.sigint_arrivals()):
        emit("signal", signal="SIGINT", tid=ext.sigint_tid())
    for c in CAPTURES:
        emit("capture", **c.report())
    emit("exit", code=0)
    print("done", flush=True)


def fd2_kind():
    import stat
    m = os.fstat(2).st_mode
    return "pipe" if stat.S_ISFIFO(m) else "pty" if os.isatty(2) else "file"


main()
