package ledger

import (
	"encoding/json"
	"testing"

	"logjam/watchdog"
)

func ev(kind string, fields map[string]any) watchdog.Event {
	fields["ev"] = kind
	b, _ := json.Marshal(fields)
	return watchdog.Event{Ev: kind, Raw: b}
}

func line(seq int, text string, replaced bool) watchdog.Event {
	return ev("line", map[string]any{"seq": seq, "thread": "MainThread", "b": []byte(text), "replaced": replaced})
}

func captured(text string, attempts ...map[string]any) watchdog.Event {
	return ev("capture", map[string]any{"stream": "StringIO", "text": text, "attempts": attempts})
}

func TestAHalfWrittenLineIsLost(t *testing.T) {
	events := []watchdog.Event{line(1, "E one\n", false), line(2, "E two\n", false)}
	j := Judge(Contract{}, events, []byte("E one\nE tw"))
	if j.Verdict != Lost || len(j.Evidence.Missing) != 1 {
		t.Fatalf("got %s %+v, want LOST naming line 2", j.Verdict, j.Evidence)
	}
}

func TestLeftOutLinesCountOnlyWithExactNotes(t *testing.T) {
	events := []watchdog.Event{line(1, "I a\n", true), line(2, "I bb\n", true), line(3, "I c\n", true)}
	exact := captured("executorch: 2 lines (9 bytes) left out\nI c\n")
	if j := Judge(Contract{Replaced: true}, append(events, exact), nil); j.Verdict != OK {
		t.Fatalf("exact note: got %s %+v", j.Verdict, j.Evidence)
	}
	wrong := captured("executorch: 2 lines (10 bytes) left out\nI c\n")
	if j := Judge(Contract{Replaced: true}, append(events, wrong), nil); j.Verdict != Lost {
		t.Fatalf("a note off by one byte must not account for the lines: got %s", j.Verdict)
	}
}

func TestFallbackAfterARefusedWriteIsNotMisrouted(t *testing.T) {
	events := []watchdog.Event{line(1, "I a\n", true),
		captured("", map[string]any{"text": "I a\n", "written": 0, "raised": "OSError"})}
	if j := Judge(Contract{Replaced: true}, events, []byte("I a\n")); j.Verdict != OK {
		t.Fatalf("got %s %+v, want OK", j.Verdict, j.Evidence)
	}
	bypass := []watchdog.Event{line(1, "I a\n", true), captured("")}
	if j := Judge(Contract{Replaced: true}, bypass, []byte("I a\n")); j.Verdict != Misrouted {
		t.Fatalf("got %s, want MISROUTED for a line the stream never saw", j.Verdict)
	}
}

func TestEscapedLinesMatchTheirRawBytes(t *testing.T) {
	events := []watchdog.Event{line(1, "E id '\xff\xff'\n", true), captured(`E id '\xff\xff'` + "\n")}
	if j := Judge(Contract{Replaced: true}, events, nil); j.Verdict != OK {
		t.Fatalf("got %s %+v", j.Verdict, j.Evidence)
	}
}

func TestBadEscapeAndInterrupts(t *testing.T) {
	ude := ev("exception", map[string]any{"thread": "MainThread", "type": "UnicodeDecodeError", "text": "'utf-8' codec can't decode byte 0xff in position 3: invalid start byte"})
	if j := Judge(Contract{}, []watchdog.Event{ude}, nil); j.Verdict != BadEsc {
		t.Fatalf("got %s, want BADESC", j.Verdict)
	}
	sigint := ev("signal", map[string]any{"signal": "SIGINT"})
	if j := Judge(Contract{Interrupts: 1}, []watchdog.Event{sigint}, nil); j.Verdict != LostInt {
		t.Fatalf("got %s, want LOSTINT", j.Verdict)
	}
	refused := captured("", map[string]any{"text": "x\n", "written": 0, "raised": "KeyboardInterrupt"})
	if j := Judge(Contract{Interrupts: 1}, []watchdog.Event{refused}, nil); j.Verdict != LostInt {
		t.Fatalf("got %s, want LOSTINT for a KeyboardInterrupt a write raised", j.Verdict)
	}
	if j := Judge(Contract{Interrupts: 1}, nil, nil); j.Verdict != OK {
		t.Fatalf("got %s, want OK: no Ctrl-C was delivered, none can be lost", j.Verdict)
	}
	ki := ev("exception", map[string]any{"thread": "MainThread", "type": "KeyboardInterrupt"})
	h := ev("handler", map[string]any{})
	if j := Judge(Contract{Interrupts: 1}, []watchdog.Event{ki, h, h}, nil); j.Verdict != DoubleInt {
		t.Fatalf("got %s, want DOUBLEINT", j.Verdict)
	}
	if j := Judge(Contract{Callbacks: 2}, []watchdog.Event{ev("callback", map[string]any{"id": "a"})}, nil); j.Verdict != LostCallback {
		t.Fatalf("got %s, want LOSTCALLBACK", j.Verdict)
	}
}

func TestFatalPathLinesAreNotMisrouted(t *testing.T) {
	lvl := func(seq int, level, text string) watchdog.Event {
		return ev("line", map[string]any{"seq": seq, "thread": "MainThread", "level": level, "in_call": true, "b": []byte(text), "replaced": true})
	}
	ctx1, ctx2, fatal := "E ctx one\n", "E ctx two\n", "F corrupt\n"
	logged := []watchdog.Event{lvl(1, "E", ctx1), lvl(2, "E", ctx2), lvl(3, "F", fatal)}
	flush := func(written ...string) watchdog.Event {
		w := make([][]byte, len(written))
		for i, s := range written {
			w[i] = []byte(s)
		}
		return ev("fatal-flush", map[string]any{"thread": "MainThread", "fatal": 3, "written": w, "left": 0})
	}
	abort := ev("abort", map[string]any{"why": "fatal log line"})
	c := Contract{Replaced: true}
	judge := func(extra []watchdog.Event, fd2 string) Judgement {
		return Judge(c, append(append([]watchdog.Event(nil), logged...), extra...), []byte(fd2))
	}

	// merged: the kept context, then the fatal line, written in the fatal path.
	if j := judge([]watchdog.Event{flush(ctx1, ctx2), abort}, ctx1+ctx2+fatal); j.Verdict != OK {
		t.Fatalf("fatal path: got %s %+v, want OK", j.Verdict, j.Evidence)
	}
	// fd2: every line direct during the call, no fatal-flush: the context
	// is MISROUTED, the fatal line itself is not.
	j := judge([]watchdog.Event{abort}, ctx1+ctx2+fatal)
	if j.Verdict != Misrouted || len(j.Evidence.Misrouted) != 2 {
		t.Fatalf("every-line rule: got %s %+v, want MISROUTED naming #1 and #2", j.Verdict, j.Evidence)
	}
	// Only the lines the fatal path names are excused: #1 went direct during the call.
	if j := judge([]watchdog.Event{flush(ctx2), abort}, ctx1+ctx2+fatal); j.Verdict != Misrouted || len(j.Evidence.Misrouted) != 1 {
		t.Fatalf("partial fatal path: got %s %+v, want MISROUTED naming #1 only", j.Verdict, j.Evidence)
	}
	// No abort after the fatal line: no fatal path.
	if j := judge([]watchdog.Event{flush(ctx1, ctx2)}, ctx1+ctx2+fatal); j.Verdict != Misrouted || len(j.Evidence.Misrouted) != 3 {
		t.Fatalf("no abort: got %s %+v, want MISROUTED naming all three", j.Verdict, j.Evidence)
	}
	// A fatal-flush that names a line fd 2 holds only after the fatal line
	// is not believed: fd 2's bytes decide.
	if j := judge([]watchdog.Event{flush(ctx1, ctx2), abort}, ctx1+fatal+ctx2); j.Verdict != Misrouted || len(j.Evidence.Misrouted) != 1 {
		t.Fatalf("out of order: got %s %+v, want MISROUTED naming #2", j.Verdict, j.Evidence)
	}
	// A fatal-flush emitted before the fatal line's own event is not its fatal path.
	early := append([]watchdog.Event{lvl(1, "E", ctx1), lvl(2, "E", ctx2), flush(ctx1, ctx2)}, lvl(3, "F", fatal), abort)
	if j := Judge(c, early, []byte(ctx1+ctx2+fatal)); j.Verdict != Misrouted || len(j.Evidence.Misrouted) != 2 {
		t.Fatalf("early flush: got %s %+v, want MISROUTED naming #1 and #2", j.Verdict, j.Evidence)
	}
	// The rule excuses routing only: a context line fd 2 never got is LOST.
	if j := judge([]watchdog.Event{flush(ctx2), abort}, ctx2+fatal); j.Verdict != Lost {
		t.Fatalf("context left behind: got %s %+v, want LOST", j.Verdict, j.Evidence)
	}
}

func TestOutOfOrderComparesFirstOccurrencesPerThread(t *testing.T) {
	events := []watchdog.Event{line(1, "E ctx 1\n", false), line(2, "E ctx 2\n", false), line(3, "F fatal\n", false)}
	if bad := OutOfOrder(events, []byte("E ctx 1\nE ctx 2\nE ctx 1\nF fatal\n")); len(bad) != 0 {
		t.Fatalf("a repeat after a fallback is allowed: %v", bad)
	}
	if bad := OutOfOrder(events, []byte("E ctx 2\nF fatal\nE ctx 1\n")); len(bad) == 0 {
		t.Fatal("context after the fatal line must be reported")
	}
}
