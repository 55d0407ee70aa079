// Package gen draws random fault schedules (package schedule) with
// pgregory.net/rapid. It is apart from package schedule only so that the
// child (cmd/simrt), which decodes schedules and never draws one, does
// not link rapid: its package initialisation was about a fifth of a
// small run's CPU time (docs/RANDOM.md, "Shrinking"). The schedule's
// names are dot-imported: this file is the schedule package's generator.
package gen

import (
	"slices"

	"pgregory.net/rapid"

	"logjam/scenario"
	. "logjam/scenario/schedule"
)

// Schedules draws schedules that lie inside logjam's contract (docs/CONTRACT.md)
// or on its edge. rapid shrinks each choice toward its first, smallest or
// absent value, so a shrunk schedule has the fewest threads, calls and
// faults and the smallest sizes that still fail.
func Schedules(f Filter) *rapid.Generator[Schedule] {
	return rapid.Custom(func(t *rapid.T) Schedule { return Draw(t, f) })
}

// Draw draws one schedule.
func Draw(t *rapid.T, f Filter) Schedule {
	sinks, lazies := SinkPolicies, LazyVariants
	if len(f.Policies) > 0 {
		sinks = slices.DeleteFunc(slices.Clone(f.Policies), func(p string) bool { return !slices.Contains(SinkPolicies, p) })
		lazies = slices.DeleteFunc(slices.Clone(f.Policies), func(p string) bool { return !slices.Contains(LazyVariants, p) })
	}
	fam := f.Kind
	switch {
	case fam != "":
	case len(lazies) == 0:
		fam = KindSink
	case len(sinks) == 0:
		fam = KindLazyInit
	case rapid.IntRange(0, 9).Draw(t, "lazyinit?") < 8:
		fam = KindSink
	default:
		fam = KindLazyInit
	}
	if fam == KindLazyInit {
		return drawLazy(t, lazies)
	}
	return drawSink(t, sinks)
}

func drawLazy(t *rapid.T, variants []string) Schedule {
	variant := rapid.SampledFrom(variants).Draw(t, "variant")
	l := &Lazy{
		Backend: rapid.SampledFrom(LazyBackends).Draw(t, "backend"),
		Race:    rapid.Bool().Draw(t, "race"),
		Ops:     rapid.SliceOfN(rapid.SampledFrom([]string{OpCall, OpInit, OpCallRNG, OpCallSeed, OpGetRNG}), 0, 5).Draw(t, "ops"),
	}
	return Schedule{Kind: KindLazyInit, Variant: variant, Platform: scenario.DefaultPlatform, Python: scenario.DefaultPython, Lazy: l}
}

// swarm is the run's subset of the fault axes (swarm testing, Groce et
// al., ISSTA 2012): each is on or off for the whole run, half the time,
// and an off axis is drawn nowhere; an on one is drawn as before. With
// every axis drawn independently, a run had most of them, and a failure
// that needs a few faults together with the others absent (a stall with
// sys.stderr the original and no Ctrl-C, no fd-2 refusal, no switch point
// in any call) was rare: each absence cost its own factor, call by call
// for the per-call ones. The axes every stall, abort and thread shape
// rests on (fd 2's kind, the stalls, threads, lines outside a call,
// daemons) stay always on. rapid shrinks a flag toward off (false).
type swarm struct {
	stderr, sigint, fd2Errors                         bool // run-wide faults
	othersCall                                        bool // threads beside the main one make calls (else only lines outside one)
	switchPoints, yields, nested, fails, cjk, invalid bool // per call (and per line outside one)
}

func drawSwarm(t *rapid.T) swarm {
	return swarm{
		stderr:       rapid.Bool().Draw(t, "swarm: sys.stderr replaced"),
		sigint:       rapid.Bool().Draw(t, "swarm: Ctrl-C"),
		fd2Errors:    rapid.Bool().Draw(t, "swarm: fd-2 refusals"),
		othersCall:   rapid.Bool().Draw(t, "swarm: other threads' calls"),
		switchPoints: rapid.Bool().Draw(t, "swarm: switch points"),
		yields:       rapid.Bool().Draw(t, "swarm: yields"),
		nested:       rapid.Bool().Draw(t, "swarm: nested calls"),
		fails:        rapid.Bool().Draw(t, "swarm: calls that raise"),
		cjk:          rapid.Bool().Draw(t, "swarm: three-byte characters"),
		invalid:      rapid.Bool().Draw(t, "swarm: invalid bytes"),
	}
}

// Message sizes around the cuts: the exception's 127 bytes, the logger's
// 255, the appended errors' 1024.
var sizeBases = []int{80, 127, 255, 1024}

func drawSink(t *rapid.T, policies []string) Schedule {
	policy := rapid.SampledFrom(policies).Draw(t, "policy")
	s := Schedule{Kind: KindSink, Policy: policy,
		Platform: rapid.SampledFrom(Platforms).Draw(t, "platform"),
		Python:   rapid.SampledFrom(Pythons).Draw(t, "python")}
	s.Buffering = rapid.SampledFrom(Bufferings).Draw(t, "buffering")
	k := &Sink{}
	s.Sink = k
	sw := drawSwarm(t)

	// How the run ends comes first, so that the axes an abort constrains
	// are drawn to fit it (an abort is as frequent as any other fault):
	// one thread, fd 2 drained by no GIL waiter (a thread that dies
	// holding the GIL leaves a forwarder's pipe as full as it is), and for
	// a foreign abort (no Fatal line) sys.stderr the original.
	ending := rapid.SampledFrom([]string{"done", "done", "fatal", "abort"}).Draw(t, "ending")
	fd2Kinds := []string{FD2File, FD2Pipe, FD2Wurlitzer, FD2IPyKernel, FD2PTY}
	if ending != "done" {
		fd2Kinds = []string{FD2File, FD2Pipe, FD2PTY}
	}
	k.FD2.Kind = rapid.SampledFrom(fd2Kinds).Draw(t, "fd2")
	// A stall at a Fatal abort, alone, on a one-page pipe: the lines after
	// the abort fill the stalled pipe (as many as it takes whole), so the
	// Fatal line's write blocks, maybe under a SIGINT.
	abortStall := ending == "fatal" && k.FD2.Kind == FD2Pipe && rapid.IntRange(0, 2).Draw(t, "stall at the abort?") == 0
	// Every stall ends (StallMs after the first blocked write, once only
	// the reader can move) and lasts well past the 100 ms room wait.
	if (k.FD2.Kind == FD2Pipe || k.FD2.Kind == FD2PTY) && !abortStall {
		k.FD2.StallMs = rapid.SampledFrom([]int{0, 200, 400}).Draw(t, "stall_ms")
	}
	// Stalls of a pipe's reader at marks (drawn below, once the calls
	// are). A stall is felt only once the lines after it fill the pipe,
	// which a call of at most 160 lines of a few hundred bytes never does
	// on 64 KiB: a pipe whose reader stalls is mostly one page, so that
	// the stall, a stall that repeats, and the lines kept behind it are
	// felt.
	marks := k.FD2.Kind == FD2Pipe && !abortStall && rapid.Bool().Draw(t, "stalls at marks?")
	switch {
	case abortStall:
		k.FD2.Capacity = 4096
	case k.FD2.Kind == FD2Pipe && (marks || k.FD2.StallMs > 0):
		k.FD2.Capacity = rapid.SampledFrom([]int{4096, 4096, 4096, 8192, 65536}).Draw(t, "capacity")
	case k.FD2.Kind == FD2Pipe || k.FD2.Kind == FD2IPyKernel || k.FD2.Kind == FD2Wurlitzer:
		k.FD2.Capacity = rapid.SampledFrom([]int{4096, 8192, 16384, 65536}).Draw(t, "capacity")
	}
	if k.FD2.Kind == FD2IPyKernel || k.FD2.Kind == FD2Wurlitzer {
		k.FD2.Chunk = rapid.SampledFrom([]int{1000, 1024, 1, 512, 4096, 65536}).Draw(t, "chunk")
	}

	// (A stall at the abort needs sys.stderr the original: lines kept
	// for a replaced one meet the stalled pipe in the fatal path.)
	if sw.stderr && k.FD2.Kind != FD2IPyKernel && ending != "abort" && !abortStall {
		k.Stderr.Kind = rapid.SampledFrom([]string{StderrOriginal, StderrCaptured, StderrSlow, StderrOSError, StderrInterrupt, StderrSignalWait}).Draw(t, "stderr")
	} else {
		k.Stderr.Kind = StderrOriginal
	}
	switch k.Stderr.Kind {
	case StderrSlow:
		k.Stderr.DelayMs = rapid.IntRange(1, 30).Draw(t, "delay_ms")
	case StderrOSError, StderrInterrupt:
		k.Stderr.K = rapid.IntRange(1, 6).Draw(t, "k")
		if k.Stderr.Kind == StderrInterrupt {
			k.Stderr.How = "before"
		}
	}
	k.SigintIgnored = sw.sigint && rapid.IntRange(0, 4).Draw(t, "sigint ignored?") == 0

	nThreads := 1
	if ending == "done" {
		nThreads = rapid.IntRange(1, 4).Draw(t, "threads")
	}
	for i := 0; i < nThreads; i++ {
		minCalls := 0
		if i == 0 {
			minCalls = 1
		}
		nCalls := 0
		if i == 0 || sw.othersCall {
			nCalls = rapid.IntRange(minCalls, 3).Draw(t, "calls")
		}
		var th Thread
		for j := 0; j < nCalls; j++ {
			th.Calls = append(th.Calls, drawCall(t, sw, nThreads, i, true))
		}
		k.Threads = append(k.Threads, th)
	}

	// One Ctrl-C source at most: the stream's own interrupt or a real SIGINT
	// (the abort stall's, if it has one).
	abortSigint := sw.sigint && abortStall && k.Stderr.Kind != StderrInterrupt && k.Stderr.Kind != StderrSignalWait &&
		rapid.IntRange(0, 2).Draw(t, "abort stall sigint?") > 0
	if sw.sigint && k.Stderr.Kind != StderrInterrupt && k.Stderr.Kind != StderrSignalWait && !abortSigint {
		var moments []string
		moments = append(moments, "", SigintLine)
		if k.FD2.Kind == FD2Pipe && k.FD2.StallMs > 0 {
			moments = append(moments, SigintBlocked)
		}
		k.Sigint = rapid.SampledFrom(moments).Draw(t, "sigint")
		if k.Sigint == SigintLine {
			k.SigintAt = rapid.IntRange(0, k.Threads[0].Calls[0].Lines).Draw(t, "sigint_at")
		}
	}

	// Without a Fatal line, the contract covers only lines that had a way
	// out before the abort: after a stall, at least one line once fd 2 has
	// room again.
	if ending != "done" {
		a := &Abort{Fatal: ending == "fatal"}
		if k.Stderr.Kind != StderrOriginal {
			// An in-memory sys.stderr dies with the process: lines of
			// earlier calls are gone whatever the sink does.
			k.Threads[0].Calls = k.Threads[0].Calls[:1]
			if k.Sigint == SigintLine {
				k.SigintAt = min(k.SigintAt, k.Threads[0].Calls[0].Lines)
			}
		}
		if k.Sigint == SigintBlocked {
			k.Sigint = ""
		}
		least := 0
		if !a.Fatal && k.FD2.StallMs > 0 {
			least = 1
		}
		a.After = rapid.IntRange(least, 20).Draw(t, "abort after")
		k.Abort = a
	}
	// A foreign abort after a stall needs a line once fd 2 has room again.
	foreignNoLine := k.Abort != nil && !k.Abort.Fatal && k.Abort.After < 1
	switch {
	case abortStall:
		k.Abort.After = 64
		k.FD2.Stalls = []Stall{{At: StallAtAbort, Ms: rapid.SampledFrom([]int{200, 400}).Draw(t, "stall ms"), Sigint: abortSigint}}
	case marks && !foreignNoLine:
		k.FD2.Stalls = drawStalls(t, sw, k, s.Platform)
	}
	// A write that raises after writing half its text leaves half a line
	// in the stream; whatever is written to it next continues that line.
	// The contract covers it only as the stream's last write: one thread,
	// one call, no line outside it, no daemon.
	if k.Stderr.Kind == StderrInterrupt && nThreads == 1 && len(k.Threads[0].Calls) == 1 &&
		rapid.Bool().Draw(t, "half?") {
		k.Stderr.How = "half"
		return s
	}
	if k.Abort == nil {
		k.Outside = rapid.SampledFrom([]int{0, 0, 8, 128}).Draw(t, "outside")
		if k.Outside > 0 {
			k.OutsideText = drawText(t, sw)
		}
		// Lines outside a call from any thread, after its calls (a
		// destructor at the end of its function, GIL held).
		for i := range k.Threads {
			k.Threads[i].Outside = rapid.SampledFrom([]int{0, 0, 0, 1, 8}).Draw(t, "thread outside")
			if k.Threads[i].Outside > 0 {
				k.Threads[i].OutsideText = drawText(t, sw)
			}
		}
		// A daemon frozen by finalization inside a stream's write that
		// released the GIL (slow, waiting for a signal) never finishes that
		// write: no sink can deliver it.
		if k.Stderr.Kind != StderrSlow && k.Stderr.Kind != StderrSignalWait {
			k.Daemons = rapid.IntRange(0, 4).Draw(t, "daemons")
		}
		// The daemons' exit window widened: a Python write holds its line
		// after it dropped the GIL (the verdict must not move).
		if k.Daemons > 0 && rapid.IntRange(0, 3).Draw(t, "widened daemon window?") == 0 {
			k.GILDroppedMs = 10
		}
	}
	// Drawn last (added after the others, when a seed's earlier choices
	// were kept; the swarm flags changed every seed's schedule since).
	if sw.fd2Errors {
		k.FD2.Errors = drawFD2Errors(t, s)
	}
	// Other threads at an abort: drawn after every other choice too.
	if k.Abort != nil {
		drawAbortThreads(t, sw, k)
	}
	// After every other choice too, so that a seed's schedule changes only
	// in its K: a stream that raises at its K-th write (drawn 1-6 above).
	if k.Stderr.Kind == StderrOSError || k.Stderr.Kind == StderrInterrupt {
		drawLateStreamWrite(t, k)
	}
	// Last, the axes that draw themselves, each in its own file.
	DrawAxes(drawer{t}, &s)
	return s
}

// drawer is rapid's choices for an axis's own draw (schedule.Drawer).
type drawer struct{ t *rapid.T }

func (d drawer) Bool(label string) bool { return rapid.Bool().Draw(d.t, label) }
func (d drawer) IntRange(lo, hi int, label string) int {
	return rapid.IntRange(lo, hi).Draw(d.t, label)
}
func (d drawer) SampledFrom(choices []int, label string) int {
	return rapid.SampledFrom(choices).Draw(d.t, label)
}

// drawLateStreamWrite moves the stream's raising write (Stderr.K), half
// the time, onto a daemon's flush: the daemons log once every thread's
// calls have flushed and every thread beside the main one has written its
// own write at its end (and before the process-wide lines' flush at exit),
// so with K drawn 1-6 alone a daemon's flush raised only when the run made
// fewer writes than K before it, and a bug on that path took a median of
// some 650 runs to show (docs/RANDOM.md, "A bug zoo"). The count is
// logjam's, found by playing seeds with every K (one flush per outermost
// call that logged, one per other thread); for another policy K is one
// more place in the run.
func drawLateStreamWrite(t *rapid.T, k *Sink) {
	if k.Daemons == 0 || !rapid.Bool().Draw(t, "k at a daemon's flush?") {
		return
	}
	before := len(k.Threads) - 1
	for _, th := range k.Threads {
		for _, c := range th.Calls {
			if c.Lines > 0 || c.Nested != nil && c.Nested.Lines > 0 {
				before++
			}
		}
	}
	k.Stderr.K = before + rapid.IntRange(1, k.Daemons).Draw(t, "k: which daemon's")
}

// drawFD2Errors draws write(2) calls on fd 2 the kernel refuses (nil: none,
// three times in four): an errno, the write calls that go through first
// (up to about the lines the schedule logs, so the refusals land anywhere
// in the run, at its end too), and how many are refused: once, a few, or
// every one from there on; EAGAIN (no room) only a bounded run of them.
func drawFD2Errors(t *rapid.T, s Schedule) *FD2Errors {
	if rapid.IntRange(0, 3).Draw(t, "fd2 errors?") > 0 {
		return nil
	}
	errnos := Errnos
	if a := s.Sink.Abort; a != nil && !a.Fatal || s.Sink.StallAt(StallAtAbort) {
		// A line kept for want of room dies with a foreign abort, as after
		// a stall, or meets a stall at the abort whose reader reads again
		// only once the Fatal line's write waits (the contract's edges).
		errnos = slices.DeleteFunc(slices.Clone(errnos), func(e string) bool { return e == ErrnoEAGAIN })
	}
	if s.Sink.FD2.Kind == FD2PTY {
		// A terminal takes part of a line once its reader falls behind
		// (stalled, or only slow: seed 11013574); a refusal of the rest
		// leaves half a line that the next one continues (the edge).
		errnos = slices.DeleteFunc(slices.Clone(errnos), func(e string) bool { return e != ErrnoEAGAIN })
	}
	if len(errnos) == 0 {
		return nil
	}
	e := &FD2Errors{Errno: rapid.SampledFrom(errnos).Draw(t, "errno")}
	e.After = rapid.IntRange(0, min(s.Lines()+8, 400)).Draw(t, "errors after")
	switch rapid.SampledFrom([]string{"once", "some", "from then on"}).Draw(t, "errors how many") {
	case "once":
		e.Times = 1
	case "some":
		e.Times = rapid.IntRange(2, 8).Draw(t, "errors times")
	default:
		if e.Errno == ErrnoEAGAIN {
			e.Times = rapid.IntRange(20, 100).Draw(t, "errors times")
		}
	}
	return e
}

// drawCall draws a call; with nest, maybe a call nested in it (a callback
// into Python that makes a binding call).
func drawCall(t *rapid.T, sw swarm, threads, self int, nest bool) Call {
	c := Call{
		Backend: rapid.IntRange(0, 1).Draw(t, "backend"),
		Lines:   rapid.IntRange(0, 160).Draw(t, "lines"),
		Level:   rapid.SampledFrom([]string{"I", "E"}).Draw(t, "level"),
	}
	c.Size = max(1, rapid.SampledFrom(sizeBases).Draw(t, "size base")+rapid.IntRange(-3, 3).Draw(t, "size delta"))
	c.CJK = sw.cjk && rapid.IntRange(0, 3).Draw(t, "cjk?") == 0
	if sw.invalid && rapid.IntRange(0, 5).Draw(t, "invalid?") == 0 {
		c.Invalid = rapid.IntRange(1, c.Size).Draw(t, "invalid at")
	}
	if threads > 1 && sw.switchPoints && rapid.IntRange(0, 1).Draw(t, "switch point?") == 0 {
		other := rapid.IntRange(0, threads-2).Draw(t, "wait for")
		if other >= self {
			other++
		}
		c.WaitFor = other + 1
	}
	c.Yield = sw.yields && rapid.Bool().Draw(t, "yield")
	if sw.fails && rapid.IntRange(0, 5).Draw(t, "fails?") == 0 {
		c.Fails = true
		c.FailChars = rapid.IntRange(30, 45).Draw(t, "fail chars")
	}
	if nest && sw.nested && rapid.IntRange(0, 5).Draw(t, "nested?") == 0 {
		n := drawCall(t, sw, threads, self, false)
		c.Nested = &n
	}
	return c
}

// drawText draws the text class of lines outside a call: nil (128 ASCII
// bytes) or a size around a cut, three-byte characters, an invalid byte.
func drawText(t *rapid.T, sw swarm) *Text {
	if rapid.IntRange(0, 3).Draw(t, "plain outside text?") == 0 {
		return nil
	}
	x := &Text{Size: max(1, rapid.SampledFrom(sizeBases).Draw(t, "outside size base")+rapid.IntRange(-3, 3).Draw(t, "outside size delta"))}
	x.CJK = sw.cjk && rapid.IntRange(0, 2).Draw(t, "outside cjk?") == 0
	if sw.invalid && rapid.IntRange(0, 2).Draw(t, "outside invalid?") == 0 {
		x.Invalid = rapid.IntRange(1, x.Size).Draw(t, "outside invalid at")
	}
	return x
}

// drawStalls draws stalls of a pipe's reader that start at marks: one
// mid-call (any thread's call, before any of its lines) or at exit; maybe
// again later in the same call, in the latter half of the call's lines
// after the first (a stall that repeats: the catch-up after the first
// meets the second, once the lines between filled the pipe past the room
// the second finds); maybe one more at exit. A stall stays until
// a writer waits for room (a sink that never waits keeps it through the
// rest of the script). One of them may send the SIGINT when the main
// thread blocks (on macOS maybe another thread's write: the kernel may
// deliver it there), maybe twice, if the run has no other Ctrl-C source
// and no abort.
func drawStalls(t *rapid.T, sw swarm, k *Sink, platform string) []Stall {
	ms := func() int { return rapid.SampledFrom([]int{200, 400}).Draw(t, "stall ms") }
	var callers []int
	for i, th := range k.Threads {
		if len(th.Calls) > 0 {
			callers = append(callers, i)
		}
	}
	oneCtrlC := sw.sigint && k.Sigint == "" && k.Stderr.Kind != StderrInterrupt && k.Stderr.Kind != StderrSignalWait
	var stalls []Stall
	exitOK := k.Abort == nil
	if !exitOK || rapid.IntRange(0, 3).Draw(t, "first stall at exit?") > 0 {
		st := Stall{At: StallAtLine, Ms: ms()}
		st.Thread = rapid.SampledFrom(callers).Draw(t, "stall thread")
		st.Call = rapid.IntRange(0, len(k.Threads[st.Thread].Calls)-1).Draw(t, "stall call")
		lines := k.Threads[st.Thread].Calls[st.Call].Lines
		st.Line = rapid.IntRange(0, lines).Draw(t, "stall line")
		stalls = append(stalls, st)
		if rapid.IntRange(0, 2).Draw(t, "stall again?") > 0 {
			again := st
			again.Ms = ms()
			again.Line = rapid.IntRange(st.Line+(lines-st.Line)/2, lines).Draw(t, "stall again line")
			stalls = append(stalls, again)
		}
	}
	if exitOK && (len(stalls) == 0 || rapid.IntRange(0, 2).Draw(t, "stall at exit too?") == 0) {
		stalls = append(stalls, Stall{At: StallAtExit, Ms: ms()})
	}
	if oneCtrlC && k.Abort == nil && rapid.IntRange(0, 2).Draw(t, "stall sigint?") == 0 {
		st := &stalls[rapid.IntRange(0, len(stalls)-1).Draw(t, "stall sigint which")]
		st.Sigint = true
		st.Twice = rapid.IntRange(0, 2).Draw(t, "a second Ctrl-C?") == 0
		// macOS may deliver a process-directed SIGINT to any thread.
		if platform == "macos" && st.At == StallAtLine && len(k.Threads) > 1 && rapid.Bool().Draw(t, "sigint on another thread?") {
			st.SigintThread = rapid.IntRange(1, len(k.Threads)-1).Draw(t, "sigint thread")
		}
	}
	return stalls
}

// drawAbortThreads draws the threads beside the main one at an abort
// (docs/CONTRACT.md, "Fatal and abort with several threads"): none once in
// four, else 1-3, each with 0-3 calls (none when the swarm leaves other
// threads' calls off) and, before a Fatal line with no
// stall at the abort, maybe lines outside a call after them (kept
// process-wide when fd 2 is busy: the fatal path writes them). They run
// when the main thread lets the GIL go before its last call: between two
// calls (a yield) or while an outermost exit flushes kept lines. They come
// with sys.stderr the original (a replaced one is put back): what their
// calls flush to a replaced one dies with it, and with the main thread's
// only call (all a replaced one allows) they would never run.
func drawAbortThreads(t *rapid.T, sw swarm, k *Sink) {
	n := rapid.IntRange(1, 4).Draw(t, "threads at the abort")
	if n < 2 {
		return
	}
	k.Stderr = Stderr{Kind: StderrOriginal}
	// The others run only when the main thread lets the GIL go before its
	// aborting call: at least one call before it (with none, the other
	// threads were drawn and never ran), maybe more (appended, so the
	// first call and the calls the stalls name stay; the last one aborts).
	for main := &k.Threads[0]; len(main.Calls) < 4 && (len(main.Calls) < 2 || rapid.Bool().Draw(t, "main call before the abort?")); {
		main.Calls = append(main.Calls, drawCall(t, sw, n, 0, true))
	}
	outside := k.Abort.Fatal && !k.StallAt(StallAtAbort)
	for i := 1; i < n; i++ {
		var th Thread
		calls := 0
		if sw.othersCall {
			calls = rapid.IntRange(0, 3).Draw(t, "calls at the abort")
		}
		for j := 0; j < calls; j++ {
			th.Calls = append(th.Calls, drawCall(t, sw, n, i, true))
		}
		if outside {
			th.Outside = rapid.SampledFrom([]int{0, 1, 8}).Draw(t, "outside at the abort")
			if th.Outside > 0 {
				th.OutsideText = drawText(t, sw)
			}
		}
		k.Threads = append(k.Threads, th)
	}
}
