// Package ledger reconciles what a child logged with what reached a stream:
// the real fd-2 bytes, the in-memory streams dumped at exit, and the
// telemetry. It decides BADESC, LOST, LOSTINT, DOUBLEINT, LOSTCALLBACK and
// MISROUTED from those observations, never from an expected verdict.
package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"logjam/sim/pytext"
	"logjam/watchdog"
)

// Verdicts the ledger can give, in order of precedence after HANG and CRASH.
const (
	BadEsc       = "BADESC"
	Lost         = "LOST"
	LostInt      = "LOSTINT"
	DoubleInt    = "DOUBLEINT"
	LostCallback = "LOSTCALLBACK"
	Misrouted    = "MISROUTED"
	OK           = "OK"
)

// Contract is the part of a scenario's contract the ledger checks.
type Contract struct {
	// Replaced: lines logged while sys.stderr was replaced must reach it.
	Replaced bool
	// Raises: the exception type the script's call must raise ("" = any).
	Raises string
	// Interrupts: Ctrl-Cs the run delivers; each must reach the caller as one
	// KeyboardInterrupt, its handler run once.
	Interrupts int
	// Callbacks: queued callbacks that must each run once.
	Callbacks int
}

// Line is one logged line from telemetry.
type Line struct {
	Seq      int    `json:"seq"`
	Thread   string `json:"thread"`
	Daemon   bool   `json:"daemon"`
	Level    string `json:"level"`
	InCall   bool   `json:"in_call"`
	Replaced bool   `json:"replaced"`
	B        []byte `json:"b"`
}

type capture struct {
	Stream   string `json:"stream"`
	Text     string `json:"text"`
	Attempts []struct {
		Text   string `json:"text"`
		Raised string `json:"raised"`
	} `json:"attempts"`
}

type exception struct {
	Thread  string `json:"thread"`
	Type    string `json:"type"`
	Text    string `json:"text"`
	Escaped bool   `json:"escaped"`
}

type start struct {
	Platform string `json:"platform"`
	Python   string `json:"python"`
}

// Evidence is what a verdict rests on.
type Evidence struct {
	Lines      int      `json:"lines_logged"`
	Delivered  int      `json:"lines_delivered"`
	Missing    []string `json:"missing,omitempty"`
	Misrouted  []string `json:"misrouted,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	Exceptions []string `json:"exceptions,omitempty"`
	Detail     string   `json:"detail,omitempty"`
}

// Judgement is the ledger's verdict with its evidence.
type Judgement struct {
	Verdict  string
	Evidence Evidence
}

// Judge reconciles one run.
func Judge(c Contract, events []watchdog.Event, fd2 []byte) Judgement {
	var (
		lines    []Line
		caps     []capture
		excs     []exception
		st       start
		handlers int
		signals  int
		cbRuns   = map[string]int{}
	)
	for _, ev := range events {
		switch ev.Ev {
		case "line":
			var l Line
			if json.Unmarshal(ev.Raw, &l) == nil {
				lines = append(lines, l)
			}
		case "capture":
			var cp capture
			if json.Unmarshal(ev.Raw, &cp) == nil {
				caps = append(caps, cp)
			}
		case "exception":
			var e exception
			if json.Unmarshal(ev.Raw, &e) == nil {
				excs = append(excs, e)
			}
		case "start":
			_ = json.Unmarshal(ev.Raw, &st)
		case "handler":
			handlers++
		case "signal":
			signals++
		case "callback":
			var cb struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(ev.Raw, &cb) == nil {
				cbRuns[cb.ID]++
			}
		}
	}
	var ev Evidence
	ev.Lines = len(lines)
	for _, e := range excs {
		ev.Exceptions = append(ev.Exceptions, e.Thread+": "+e.Type+": "+e.Text)
	}

	// BADESC: a strict decode raised, raw bytes leaked into Python text, or
	// the call raised another type than the one the script must see.
	for _, e := range excs {
		if e.Type == "UnicodeDecodeError" || pytext.HasUnescapedInvalid(e.Text) {
			ev.Detail = fmt.Sprintf("%s raised %s: %s", e.Thread, e.Type, e.Text)
			return Judgement{BadEsc, ev}
		}
	}
	if c.Raises != "" && !raised(excs, c.Raises) {
		ev.Detail = "the call must raise " + c.Raises
		return Judgement{BadEsc, ev}
	}

	// LOST: every line must be a complete line of fd 2 or of a Python
	// stream; lines the cap left out count only when the notes' numbers are
	// exact.
	fdLines := completeLines(fd2)
	pyLines := map[string]int{}
	var notes []string
	noteSeen := map[string]int{}
	countNotes := func(ls map[string]int) {
		for l, n := range ls {
			if _, _, ok := parseNote(l); ok && n > noteSeen[l] {
				noteSeen[l] = n
			}
		}
	}
	for _, cp := range caps {
		cl := completeLines([]byte(cp.Text))
		for l, n := range cl {
			pyLines[l] += n
		}
		countNotes(cl)
	}
	countNotes(fdLines)
	var noteLines, noteBytes int
	for l, n := range noteSeen {
		nl, nb, _ := parseNote(l)
		noteLines += nl * n
		noteBytes += nb * n
		notes = append(notes, strings.TrimSpace(l))
	}
	sort.Strings(notes)
	ev.Notes = notes
	var missing []Line
	missingBytes := 0
	for _, l := range lines {
		if fdLines[string(l.B)] > 0 || pyLines[pytext.DecodeEscaped(l.B)] > 0 {
			ev.Delivered++
			continue
		}
		missing = append(missing, l)
		missingBytes += len(l.B)
	}
	if len(missing) > 0 && !(noteLines == len(missing) && noteBytes == missingBytes) {
		for i, l := range missing {
			if i == 5 {
				ev.Missing = append(ev.Missing, fmt.Sprintf("... and %d more", len(missing)-5))
				break
			}
			ev.Missing = append(ev.Missing, fmt.Sprintf("#%d %s: %q", l.Seq, l.Thread, clip(l.B)))
		}
		ev.Detail = fmt.Sprintf("%d of %d lines reached no stream", len(missing), len(lines))
		if noteLines > 0 {
			ev.Detail += fmt.Sprintf("; the notes account for %d lines (%d bytes), not %d (%d bytes)", noteLines, noteBytes, len(missing), missingBytes)
		}
		return Judgement{Lost, ev}
	}

	// LOSTINT and DOUBLEINT: each Ctrl-C reaches the caller once. A Ctrl-C
	// the run never delivered cannot be lost: the contract's count is capped
	// by the interrupts that happened, real SIGINTs that reached the
	// interpreter ("signal" events) and KeyboardInterrupts a stream's write
	// raised (a policy that never calls the stream's write never meets one).
	if c.Interrupts > 0 {
		delivered := signals
		for _, cp := range caps {
			for _, a := range cp.Attempts {
				if a.Raised == "KeyboardInterrupt" {
					delivered++
				}
			}
		}
		want := min(c.Interrupts, delivered)
		kis := 0
		for _, e := range excs {
			if e.Type == "KeyboardInterrupt" {
				kis++
			}
		}
		if kis < want {
			ev.Detail = fmt.Sprintf("%d Ctrl-C, %d KeyboardInterrupt reached the caller", want, kis)
			return Judgement{LostInt, ev}
		}
		if handlers > want {
			ev.Detail = fmt.Sprintf("%d Ctrl-C, the SIGINT handler ran %d times", want, handlers)
			return Judgement{DoubleInt, ev}
		}
	}

	// LOSTCALLBACK: every queued callback ran.
	if c.Callbacks > 0 && len(cbRuns) < c.Callbacks {
		ev.Detail = fmt.Sprintf("%d callbacks queued, %d ran", c.Callbacks, len(cbRuns))
		return Judgement{LostCallback, ev}
	}

	// MISROUTED: with sys.stderr replaced, a line reached fd 2 although the
	// stream never refused it, outside the documented daemon rule (Linux,
	// Python before 3.13.8, a daemon thread) and the fatal-path rule
	// (FatalPathLines).
	if c.Replaced {
		refused := map[string]bool{}
		for _, cp := range caps {
			for _, a := range cp.Attempts {
				if a.Raised != "" {
					for l := range completeLines([]byte(a.Text)) {
						refused[l] = true
					}
				}
			}
		}
		daemonRule := st.Platform == "linux" && versionBefore(st.Python, 3, 13, 8)
		fatalPath := FatalPathLines(events, fd2)
		for _, l := range lines {
			esc := pytext.DecodeEscaped(l.B)
			onFD2 := fdLines[string(l.B)] > 0
			if !l.Replaced || !onFD2 || pyLines[esc] > 0 || refused[esc] || (l.Daemon && daemonRule) || fatalPath[l.Seq] {
				continue
			}
			if len(ev.Misrouted) < 5 {
				ev.Misrouted = append(ev.Misrouted, fmt.Sprintf("#%d %s: %q", l.Seq, l.Thread, clip(l.B)))
			}
		}
		if len(ev.Misrouted) > 0 {
			ev.Detail = "sys.stderr was replaced and these lines went to fd 2 without it refusing them"
			return Judgement{Misrouted, ev}
		}
	}
	return Judgement{OK, ev}
}

// FatalPathLines is the fatal-path rule of MISROUTED (the merged fix's
// documented rule, the seed's third review round): when a run ends in the
// runtime's abort after a Fatal line, the lines that reached fd 2 in that
// fatal path (the kept lines the sink wrote just before the fatal line,
// and the fatal line itself) are not MISROUTED although sys.stderr was
// replaced: an in-memory capture cannot outlive the abort, so fd 2 is the
// only stream left. Lines a sink sent to fd 2 during the call, before the
// fatal line (fd2's every-line rule), are not covered and stay MISROUTED.
// It returns the sequence numbers of those lines.
//
// Observations and why they can be trusted:
//   - the fatal line: a "line" event of level F followed by an "abort"
//     event. The runtime emits the line's event, hands the line to the
//     sink, then emits "abort" and raises SIGABRT, all on the logging
//     thread; telemetry is written synchronously under one mutex, so the
//     event order is the order of emission. (The cell has already checked
//     that the child really died by SIGABRT after an "abort" event.)
//   - the kept lines: the sink's "fatal-flush" event names the bytes of
//     the kept lines it wrote in its fatal branch, which only a Fatal line
//     reaches; it is emitted after those writes returned. It is accepted
//     only for that fatal line (same thread, "fatal" its sequence number),
//     only between the fatal line's event and the abort, and only for lines
//     that thread logged before the fatal line.
//   - fd 2 itself: each of those lines, and the fatal line, must really be
//     on fd 2, each kept line before the fatal line's first occurrence, so
//     telemetry alone never excuses a line.
func FatalPathLines(events []watchdog.Event, fd2 []byte) map[int]bool {
	type flush struct {
		at      int
		Thread  string   `json:"thread"`
		Fatal   int      `json:"fatal"`
		Written [][]byte `json:"written"`
	}
	var (
		lines   []Line
		lineAt  = map[int]int{} // seq -> index of its "line" event
		flushes []flush
		abortAt = -1
	)
	for i, ev := range events {
		switch ev.Ev {
		case "line":
			var l Line
			if json.Unmarshal(ev.Raw, &l) == nil {
				lines = append(lines, l)
				lineAt[l.Seq] = i
			}
		case "fatal-flush":
			f := flush{at: i}
			if json.Unmarshal(ev.Raw, &f) == nil {
				flushes = append(flushes, f)
			}
		case "abort":
			if abortAt < 0 {
				abortAt = i
			}
		}
	}
	exempt := map[int]bool{}
	if abortAt < 0 {
		return exempt
	}
	byBytes := map[string]Line{}
	for _, l := range lines {
		byBytes[string(l.B)] = l
	}
	for _, f := range lines {
		if f.Level != "F" || lineAt[f.Seq] > abortAt {
			continue
		}
		fatalPos := bytes.Index(fd2, f.B)
		if fatalPos < 0 {
			continue
		}
		exempt[f.Seq] = true
		for _, fl := range flushes {
			if fl.Fatal != f.Seq || fl.Thread != f.Thread || fl.at < lineAt[f.Seq] || fl.at > abortAt {
				continue
			}
			for _, w := range fl.Written {
				k, ok := byBytes[string(w)]
				if !ok || k.Thread != f.Thread || k.Seq >= f.Seq {
					continue
				}
				if at := bytes.Index(fd2, k.B); at >= 0 && at < fatalPos {
					exempt[k.Seq] = true
				}
			}
		}
	}
	return exempt
}

func raised(excs []exception, typ string) bool {
	for _, e := range excs {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// completeLines counts each line that ends with a newline; a line cut short
// (no newline yet) was not delivered.
func completeLines(b []byte) map[string]int {
	m := map[string]int{}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		m[string(b[:i+1])]++
		b = b[i+1:]
	}
	return m
}

var noteRE = regexp.MustCompile(`(\d+) lines \((\d+) bytes\) left out`)

func parseNote(line string) (lines, bytes int, ok bool) {
	m := noteRE.FindStringSubmatch(line)
	if m == nil {
		return 0, 0, false
	}
	l, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return l, b, true
}

func clip(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

func versionBefore(v string, major, minor, micro int) bool {
	var a, b, c int
	fmt.Sscanf(v, "%d.%d.%d", &a, &b, &c)
	if a != major {
		return a < major
	}
	if b != minor {
		return b < minor
	}
	return c < micro
}

// OutOfOrder reports, for each thread, lines whose first occurrence on fd 2
// comes before that of a line the same thread logged earlier ("lines arrive
// complete and in order"; "fd 2 must show the context, then the fatal
// line"). Lines fd 2 never got are Judge's business (LOST), and repeats
// after a fallback are allowed: only first occurrences count. At most five
// problems are listed.
func OutOfOrder(events []watchdog.Event, fd2 []byte) []string {
	byThread := map[string][]Line{}
	var threads []string
	for _, ev := range events {
		var l Line
		if ev.Ev != "line" || json.Unmarshal(ev.Raw, &l) != nil {
			continue
		}
		if _, seen := byThread[l.Thread]; !seen {
			threads = append(threads, l.Thread)
		}
		byThread[l.Thread] = append(byThread[l.Thread], l)
	}
	var bad []string
	for _, th := range threads {
		ls := byThread[th]
		sort.Slice(ls, func(i, j int) bool { return ls[i].Seq < ls[j].Seq })
		last, lastSeq := -1, 0
		for _, l := range ls {
			at := bytes.Index(fd2, l.B)
			if at < 0 {
				continue
			}
			if at < last && len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("%s: line #%d at byte %d, before #%d at byte %d", th, l.Seq, at, lastSeq, last))
			}
			last, lastSeq = at, l.Seq
		}
	}
	return bad
}
