package ledger

import (
	"slices"
	"strings"
	"testing"

	"logjam/scenario"
	"logjam/telemetry"
	"logjam/verdict"
)

// ev is p as the parent reads it off the wire.
func ev(p telemetry.Payload) telemetry.Event {
	b, err := telemetry.Encode(p, 0)
	if err != nil {
		panic(err)
	}
	e, _ := telemetry.Parse(b)
	return e
}

func judgeEv(c scenario.Contract, events []telemetry.Event, fd2 []byte) Judgement {
	return Judge(c, telemetry.Decode(events), fd2)
}

func line(seq int, text string, replaced bool) telemetry.Event {
	return ev(telemetry.Line{Seq: seq, Thread: "MainThread", B: []byte(text), Replaced: replaced})
}

func captured(text string, attempts ...telemetry.Attempt) telemetry.Event {
	return ev(telemetry.Capture{Stream: "StringIO", Text: text, Attempts: attempts})
}

// The checks run in the order verdict.Precedence gives.
func TestChecksRunInPrecedenceOrder(t *testing.T) {
	for i := 1; i < len(checks); i++ {
		if verdict.Rank(checks[i-1].verdict) >= verdict.Rank(checks[i].verdict) {
			t.Errorf("%s is checked before %s", checks[i-1].verdict, checks[i].verdict)
		}
	}
}

func TestAHalfWrittenLineIsLost(t *testing.T) {
	events := []telemetry.Event{line(1, "E one\n", false), line(2, "E two\n", false)}
	j := judgeEv(scenario.Contract{}, events, []byte("E one\nE tw"))
	if j.Verdict != verdict.Lost || len(j.Evidence.Missing) != 1 {
		t.Fatalf("got %s %+v, want LOST naming line 2", j.Verdict, j.Evidence)
	}
}

func TestLeftOutLinesCountOnlyWithExactNotes(t *testing.T) {
	events := []telemetry.Event{line(1, "I a\n", true), line(2, "I bb\n", true), line(3, "I c\n", true)}
	exact := captured("executorch: 2 lines (9 bytes) left out\nI c\n")
	if j := judgeEv(scenario.Contract{Replaced: true}, append(events, exact), nil); j.Verdict != verdict.OK {
		t.Fatalf("exact note: got %s %+v", j.Verdict, j.Evidence)
	}
	wrong := captured("executorch: 2 lines (10 bytes) left out\nI c\n")
	if j := judgeEv(scenario.Contract{Replaced: true}, append(events, wrong), nil); j.Verdict != verdict.Lost {
		t.Fatalf("a note off by one byte must not account for the lines: got %s", j.Verdict)
	}
}

func TestFallbackAfterARefusedWriteIsNotMisrouted(t *testing.T) {
	events := []telemetry.Event{line(1, "I a\n", true),
		captured("", telemetry.Attempt{Text: "I a\n", Raised: "OSError"})}
	if j := judgeEv(scenario.Contract{Replaced: true}, events, []byte("I a\n")); j.Verdict != verdict.OK {
		t.Fatalf("got %s %+v, want verdict.OK", j.Verdict, j.Evidence)
	}
	bypass := []telemetry.Event{line(1, "I a\n", true), captured("")}
	if j := judgeEv(scenario.Contract{Replaced: true}, bypass, []byte("I a\n")); j.Verdict != verdict.Misrouted {
		t.Fatalf("got %s, want MISROUTED for a line the stream never saw", j.Verdict)
	}
}

func TestEscapedLinesMatchTheirRawBytes(t *testing.T) {
	events := []telemetry.Event{line(1, "E id '\xff\xff'\n", true), captured(`E id '\xff\xff'` + "\n")}
	if j := judgeEv(scenario.Contract{Replaced: true}, events, nil); j.Verdict != verdict.OK {
		t.Fatalf("got %s %+v", j.Verdict, j.Evidence)
	}
}

func TestBadEscapeAndInterrupts(t *testing.T) {
	ude := ev(telemetry.Exception{Thread: "MainThread", Type: "UnicodeDecodeError", Text: "'utf-8' codec can't decode byte 0xff in position 3: invalid start byte"})
	if j := judgeEv(scenario.Contract{}, []telemetry.Event{ude}, nil); j.Verdict != verdict.BadEsc {
		t.Fatalf("got %s, want BADESC", j.Verdict)
	}
	raw := ev(telemetry.Exception{Thread: "MainThread", Type: "RuntimeError", Text: "Program identifier '\xff\xff\xff\xff'"})
	if j := judgeEv(scenario.Contract{}, []telemetry.Event{raw}, nil); j.Verdict != verdict.BadEsc {
		t.Fatalf("raw invalid bytes in an exception text: got %s, want BADESC", j.Verdict)
	}
	escaped := ev(telemetry.Exception{Thread: "MainThread", Type: "RuntimeError", Text: `Program identifier '\xff\xff\xff\xff'`})
	if j := judgeEv(scenario.Contract{Raises: "RuntimeError"}, []telemetry.Event{escaped}, nil); j.Verdict != verdict.OK {
		t.Fatalf("an escaped exception text: got %s, want OK", j.Verdict)
	}
	sigint := ev(telemetry.Signal{Signal: "SIGINT"})
	if j := judgeEv(scenario.Contract{Interrupts: 1}, []telemetry.Event{sigint}, nil); j.Verdict != verdict.LostInt {
		t.Fatalf("got %s, want LOSTINT", j.Verdict)
	}
	refused := captured("", telemetry.Attempt{Text: "x\n", Raised: "KeyboardInterrupt"})
	if j := judgeEv(scenario.Contract{Interrupts: 1}, []telemetry.Event{refused}, nil); j.Verdict != verdict.LostInt {
		t.Fatalf("got %s, want LOSTINT for a KeyboardInterrupt a write raised", j.Verdict)
	}
	if j := judgeEv(scenario.Contract{Interrupts: 1}, nil, nil); j.Verdict != verdict.OK {
		t.Fatalf("got %s, want verdict.OK: no Ctrl-C was delivered, none can be lost", j.Verdict)
	}
	ki := ev(telemetry.Exception{Thread: "MainThread", Type: "KeyboardInterrupt"})
	h := ev(telemetry.Handler{})
	if j := judgeEv(scenario.Contract{Interrupts: 1}, []telemetry.Event{ki, h, h}, nil); j.Verdict != verdict.DoubleInt {
		t.Fatalf("got %s, want DOUBLEINT", j.Verdict)
	}
	if j := judgeEv(scenario.Contract{Callbacks: 2}, []telemetry.Event{ev(telemetry.Callback{ID: "a"})}, nil); j.Verdict != verdict.LostCallback {
		t.Fatalf("got %s, want LOSTCALLBACK", j.Verdict)
	}
}

func TestFatalPathLinesAreNotMisrouted(t *testing.T) {
	lvl := func(seq int, level, text string) telemetry.Event {
		return ev(telemetry.Line{Seq: seq, Thread: "MainThread", Level: level, InCall: true, B: []byte(text), Replaced: true})
	}
	ctx1, ctx2, fatal := "E ctx one\n", "E ctx two\n", "F corrupt\n"
	logged := []telemetry.Event{lvl(1, "E", ctx1), lvl(2, "E", ctx2), lvl(3, "F", fatal)}
	flush := func(written ...string) telemetry.Event {
		w := make([][]byte, len(written))
		for i, s := range written {
			w[i] = []byte(s)
		}
		return ev(telemetry.FatalFlush{Thread: "MainThread", Fatal: 3, Written: w})
	}
	abort := ev(telemetry.Abort{Why: "fatal log line"})
	c := scenario.Contract{Replaced: true}
	judge := func(extra []telemetry.Event, fd2 string) Judgement {
		return judgeEv(c, append(append([]telemetry.Event(nil), logged...), extra...), []byte(fd2))
	}

	// merged: the kept context, then the fatal line, written in the fatal path.
	if j := judge([]telemetry.Event{flush(ctx1, ctx2), abort}, ctx1+ctx2+fatal); j.Verdict != verdict.OK {
		t.Fatalf("fatal path: got %s %+v, want verdict.OK", j.Verdict, j.Evidence)
	}
	// fd2: every line direct during the call, no fatal-flush: the context
	// is MISROUTED, the fatal line itself is not.
	j := judge([]telemetry.Event{abort}, ctx1+ctx2+fatal)
	if j.Verdict != verdict.Misrouted || len(j.Evidence.Misrouted) != 2 {
		t.Fatalf("every-line rule: got %s %+v, want MISROUTED naming #1 and #2", j.Verdict, j.Evidence)
	}
	// Only the lines the fatal path names are excused: #1 went direct during the call.
	if j := judge([]telemetry.Event{flush(ctx2), abort}, ctx1+ctx2+fatal); j.Verdict != verdict.Misrouted || len(j.Evidence.Misrouted) != 1 {
		t.Fatalf("partial fatal path: got %s %+v, want MISROUTED naming #1 only", j.Verdict, j.Evidence)
	}
	// No abort after the fatal line: no fatal path.
	if j := judge([]telemetry.Event{flush(ctx1, ctx2)}, ctx1+ctx2+fatal); j.Verdict != verdict.Misrouted || len(j.Evidence.Misrouted) != 3 {
		t.Fatalf("no abort: got %s %+v, want MISROUTED naming all three", j.Verdict, j.Evidence)
	}
	// A fatal-flush that names a line fd 2 holds only after the fatal line
	// is not believed: fd 2's bytes decide.
	if j := judge([]telemetry.Event{flush(ctx1, ctx2), abort}, ctx1+fatal+ctx2); j.Verdict != verdict.Misrouted || len(j.Evidence.Misrouted) != 1 {
		t.Fatalf("out of order: got %s %+v, want MISROUTED naming #2", j.Verdict, j.Evidence)
	}
	// A fatal-flush emitted before the fatal line's own event is not its fatal path.
	early := append([]telemetry.Event{lvl(1, "E", ctx1), lvl(2, "E", ctx2), flush(ctx1, ctx2)}, lvl(3, "F", fatal), abort)
	if j := judgeEv(c, early, []byte(ctx1+ctx2+fatal)); j.Verdict != verdict.Misrouted || len(j.Evidence.Misrouted) != 2 {
		t.Fatalf("early flush: got %s %+v, want MISROUTED naming #1 and #2", j.Verdict, j.Evidence)
	}
	// The rule excuses routing only: a context line fd 2 never got is LOST.
	if j := judge([]telemetry.Event{flush(ctx2), abort}, ctx2+fatal); j.Verdict != verdict.Lost {
		t.Fatalf("context left behind: got %s %+v, want LOST", j.Verdict, j.Evidence)
	}
	// Another thread's line kept process-wide (logged outside a call
	// before the fatal line) and written by the fatal path is excused too;
	// one it logged after the fatal line is not.
	other := "I T1 outside\n"
	byT1 := func(seq int) telemetry.Event {
		return ev(telemetry.Line{Seq: seq, Thread: "T1", Level: "I", B: []byte(other), Replaced: true})
	}
	withT1 := append([]telemetry.Event{byT1(0)}, logged...)
	if j := judgeEv(c, append(withT1, flush(other, ctx1, ctx2), abort), []byte(other+ctx1+ctx2+fatal)); j.Verdict != verdict.OK {
		t.Fatalf("another thread's process-wide line in the fatal path: got %s %+v, want verdict.OK", j.Verdict, j.Evidence)
	}
	late := append(append([]telemetry.Event(nil), logged...), byT1(4), flush(other, ctx1, ctx2), abort)
	if j := judgeEv(c, late, []byte(other+ctx1+ctx2+fatal)); j.Verdict != verdict.Misrouted || len(j.Evidence.Misrouted) != 1 {
		t.Fatalf("a line logged after the fatal line: got %s %+v, want MISROUTED naming it", j.Verdict, j.Evidence)
	}
}

func threadLine(seq int, thread, text string) telemetry.Event {
	return ev(telemetry.Line{Seq: seq, Thread: thread, B: []byte(text)})
}

// The order rule: per thread and per stream, first occurrences in the
// order logged; a repeat only after a failed or interrupted write.
func TestOrderIsPerThreadAndPerStream(t *testing.T) {
	ctx := []telemetry.Event{line(1, "E ctx 1\n", false), line(2, "E ctx 2\n", false), line(3, "F fatal\n", false)}
	cases := []struct {
		name   string
		events []telemetry.Event
		fd2    string
		want   verdict.Verdict
	}{
		{"in order", ctx, "E ctx 1\nE ctx 2\nF fatal\n", verdict.OK},
		{"the line at hand before its kept backlog", ctx, "E ctx 2\nE ctx 1\nF fatal\n", verdict.Reordered},
		{"context after the fatal line", ctx, "E ctx 2\nF fatal\nE ctx 1\n", verdict.Reordered},
		{"a repeat with no failed write", ctx, "E ctx 1\nE ctx 2\nE ctx 1\nF fatal\n", verdict.Reordered},
		{"a repeat after a failed flush resent its lines", append(slices.Clone(ctx), ev(telemetry.Fallback{Thread: "MainThread", Lines: 2, Why: "flush raised KeyboardInterrupt"})),
			"E ctx 1\nE ctx 2\nE ctx 1\nE ctx 2\nF fatal\n", verdict.OK},
		{"a repeat after an interrupted write(2)", append(slices.Clone(ctx), ev(telemetry.WriteInterrupted{Thread: "MainThread", Written: 3, Lost: 5})),
			"E ctx 1\nE ctx 1\nE ctx 2\nF fatal\n", verdict.OK},
		{"a repeat allowed is still ordered by first occurrences", append(slices.Clone(ctx), ev(telemetry.Retained{Bytes: 8})),
			"E ctx 2\nE ctx 1\nE ctx 2\nF fatal\n", verdict.Reordered},
		{"threads interleave freely", []telemetry.Event{threadLine(1, "A", "I a1\n"), threadLine(2, "B", "I b1\n"), threadLine(3, "A", "I a2\n"), threadLine(4, "B", "I b2\n")},
			"I b1\nI b2\nI a1\nI a2\n", verdict.OK},
		{"one thread out of order among others", []telemetry.Event{threadLine(1, "A", "I a1\n"), threadLine(2, "B", "I b1\n"), threadLine(3, "A", "I a2\n")},
			"I a2\nI b1\nI a1\n", verdict.Reordered},
		{"a catch-up's rotation is not a repeat (the note is not a logged line)", ctx,
			"executorch: 0 lines (0 bytes) left out\nE ctx 1\nE ctx 2\nF fatal\n", verdict.OK},
	}
	for _, tc := range cases {
		if j := judgeEv(scenario.Contract{}, tc.events, []byte(tc.fd2)); j.Verdict != tc.want {
			t.Errorf("%s: got %s %v, want %s", tc.name, j.Verdict, j.Evidence.Reordered, tc.want)
		}
	}
}

// Each in-memory stream is judged on its own, with the line's escaped text;
// a line on fd 2 and in sys.stderr (a fallback) is in order in each.
func TestOrderInACapturedStream(t *testing.T) {
	events := []telemetry.Event{line(1, "E one \xff\n", true), line(2, "E two\n", true)}
	c := scenario.Contract{Replaced: true}
	if j := judgeEv(c, append(slices.Clone(events), captured("E one \\xff\nE two\n")), nil); j.Verdict != verdict.OK {
		t.Fatalf("in order: got %s %+v", j.Verdict, j.Evidence)
	}
	j := judgeEv(c, append(slices.Clone(events), captured("E two\nE one \\xff\n")), nil)
	if j.Verdict != verdict.Reordered || len(j.Evidence.Reordered) != 1 || !strings.Contains(j.Evidence.Reordered[0], "StringIO") {
		t.Fatalf("out of order in sys.stderr: got %s %+v, want REORDERED naming the stream", j.Verdict, j.Evidence)
	}
	// LOST outranks it: a line missing is judged first.
	if j := judgeEv(c, append(slices.Clone(events), captured("E two\n")), nil); j.Verdict != verdict.Lost {
		t.Fatalf("missing: got %s", j.Verdict)
	}
}

// A line the kernel refused for good (EPIPE, ENOSPC, EIO) is not the sink's
// loss; one refused with EAGAIN (no room) is, as is a line after a refusal
// that no write ever offered (a sink that gave up).
func TestKernelRefusedLinesAreNotLost(t *testing.T) {
	lines := []telemetry.Event{line(1, "I a\n", false), line(2, "I b\n", false), line(3, "I c\n", false)}
	refused := func(errno, b string) telemetry.Event {
		return ev(telemetry.FD2Refused{Thread: "MainThread", Errno: errno, B: []byte(b)})
	}
	for _, tc := range []struct {
		name   string
		events []telemetry.Event
		fd2    string
		want   verdict.Verdict
	}{
		{"EIO refused line 2, line 3 went out", []telemetry.Event{refused("EIO", "I b\n")}, "I a\nI c\n", verdict.OK},
		{"EPIPE refused lines 2 and 3 in one write", []telemetry.Event{refused("EPIPE", "I b\nI c\n")}, "I a\n", verdict.OK},
		{"ENOSPC refused the rest of line 2 after its first byte, and line 3", []telemetry.Event{refused("ENOSPC", " b\n"), refused("ENOSPC", "I c\n")}, "I a\nI", verdict.OK},
		{"ENOSPC refused the start of line 3, after line 2", []telemetry.Event{refused("ENOSPC", "I b\nI ")}, "I a\n", verdict.OK},
		{"EAGAIN is no room: the sink must write it later", []telemetry.Event{refused("EAGAIN", "I b\n")}, "I a\nI c\n", verdict.Lost},
		{"after one EIO the sink gave up on line 3", []telemetry.Event{refused("EIO", "I b\n")}, "I a\n", verdict.Lost},
	} {
		j := judgeEv(scenario.Contract{}, append(slices.Clone(lines), tc.events...), []byte(tc.fd2))
		if j.Verdict != tc.want {
			t.Errorf("%s: got %s %+v, want %s", tc.name, j.Verdict, j.Evidence, tc.want)
		}
	}
	// A refused write allows a later resend to repeat lines.
	repeat := append(slices.Clone(lines), refused("EIO", "I b\n"))
	if j := judgeEv(scenario.Contract{}, repeat, []byte("I a\nI b\nI b\nI c\n")); j.Verdict != verdict.OK {
		t.Errorf("a resend after a refused write: got %s %+v", j.Verdict, j.Evidence)
	}
}

// A Fatal line the kernel refused still ends a fatal path: the context its
// sink wrote before it is not MISROUTED.
func TestARefusedFatalLineStillEndsTheFatalPath(t *testing.T) {
	events := []telemetry.Event{
		line(1, "I ctx\n", true),
		ev(telemetry.Line{Seq: 2, Thread: "MainThread", Level: "F", B: []byte("F boom\n"), Replaced: true}),
		ev(telemetry.FatalFlush{Thread: "MainThread", Fatal: 2, Written: [][]byte{[]byte("I ctx\n")}}),
		ev(telemetry.FD2Refused{Thread: "MainThread", Errno: "EPIPE", B: []byte("F boom\n")}),
		ev(telemetry.Abort{Why: "fatal"}),
		captured(""),
	}
	if j := judgeEv(scenario.Contract{Replaced: true, Ends: scenario.EndsAbort}, events, []byte("I ctx\n")); j.Verdict != verdict.OK {
		t.Fatalf("got %s %+v", j.Verdict, j.Evidence)
	}
}
