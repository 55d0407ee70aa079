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
	if j := Judge(Contract{Interrupts: 1}, nil, nil); j.Verdict != LostInt {
		t.Fatalf("got %s, want LOSTINT", j.Verdict)
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
