package ledger

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"logjam/daemon"
	"logjam/internal/pytext"
	"logjam/scenario"
	"logjam/telemetry"
	"logjam/verdict"
)

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
	Verdict  verdict.Verdict
	Evidence Evidence
}

// Judge reconciles one run: each check below, in precedence order; the
// first that finds its verdict wins, else OK.
func Judge(c scenario.Contract, tr *telemetry.Transcript, fd2 []byte) Judgement {
	r := newRun(c, tr, fd2)
	for _, ck := range checks {
		if detail, found := ck.find(r); found {
			r.ev.Detail = detail
			return Judgement{ck.verdict, r.ev}
		}
	}
	return Judgement{verdict.OK, r.ev}
}

// check finds one verdict; checks lists them in precedence order.
type check struct {
	verdict verdict.Verdict
	find    func(*run) (detail string, found bool)
}

var checks = []check{
	{verdict.BadEsc, badEsc},
	{verdict.Lost, lost},
	{verdict.LostInt, lostInt},
	{verdict.DoubleInt, doubleInt},
	{verdict.LostCallback, lostCallback},
	{verdict.Misrouted, misrouted},
}

// run is one judgement's observations.
type run struct {
	c       scenario.Contract
	tr      *telemetry.Transcript
	fd2     []byte
	fdLines map[string]int // complete lines of fd 2
	pyLines map[string]int // complete lines of the Python streams
	ev      Evidence
}

func newRun(c scenario.Contract, tr *telemetry.Transcript, fd2 []byte) *run {
	r := &run{c: c, tr: tr, fd2: fd2, fdLines: completeLines(fd2), pyLines: map[string]int{}}
	r.ev.Lines = len(tr.Lines)
	for _, e := range tr.Exceptions {
		r.ev.Exceptions = append(r.ev.Exceptions, e.Thread+": "+e.Type+": "+e.Text)
	}
	for _, cp := range tr.Captures {
		for l, n := range completeLines([]byte(cp.Text)) {
			r.pyLines[l] += n
		}
	}
	return r
}

// badEsc: a strict decode raised, raw bytes leaked into Python text, or the
// call raised another type than the one the script must see.
func badEsc(r *run) (string, bool) {
	for _, e := range r.tr.Exceptions {
		if e.Type == "UnicodeDecodeError" || pytext.HasUnescapedInvalid(e.Text) {
			return fmt.Sprintf("%s raised %s: %s", e.Thread, e.Type, e.Text), true
		}
	}
	if r.c.Raises != "" && !raised(r.tr.Exceptions, r.c.Raises) {
		return "the call must raise " + r.c.Raises, true
	}
	return "", false
}

// lost: every line must be a complete line of fd 2 or of a Python stream;
// lines the cap left out count only when the notes' numbers are exact.
func lost(r *run) (string, bool) {
	noteSeen := map[string]int{}
	countNotes := func(ls map[string]int) {
		for l, n := range ls {
			if _, _, ok := parseNote(l); ok && n > noteSeen[l] {
				noteSeen[l] = n
			}
		}
	}
	for _, cp := range r.tr.Captures {
		countNotes(completeLines([]byte(cp.Text)))
	}
	countNotes(r.fdLines)
	var noteLines, noteBytes int
	var notes []string
	for l, n := range noteSeen {
		nl, nb, _ := parseNote(l)
		noteLines += nl * n
		noteBytes += nb * n
		notes = append(notes, strings.TrimSpace(l))
	}
	sort.Strings(notes)
	r.ev.Notes = notes
	var missing []telemetry.Line
	missingBytes := 0
	for _, l := range r.tr.Lines {
		if r.fdLines[string(l.B)] > 0 || r.pyLines[pytext.DecodeEscaped(l.B)] > 0 {
			r.ev.Delivered++
			continue
		}
		missing = append(missing, l)
		missingBytes += len(l.B)
	}
	if len(missing) == 0 || (noteLines == len(missing) && noteBytes == missingBytes) {
		return "", false
	}
	for i, l := range missing {
		if i == 5 {
			r.ev.Missing = append(r.ev.Missing, fmt.Sprintf("... and %d more", len(missing)-5))
			break
		}
		r.ev.Missing = append(r.ev.Missing, fmt.Sprintf("#%d %s: %q", l.Seq, l.Thread, clip(l.B)))
	}
	detail := fmt.Sprintf("%d of %d lines reached no stream", len(missing), len(r.tr.Lines))
	if noteLines > 0 {
		detail += fmt.Sprintf("; the notes account for %d lines (%d bytes), not %d (%d bytes)", noteLines, noteBytes, len(missing), missingBytes)
	}
	return detail, true
}

// interruptsDelivered caps the contract's Ctrl-Cs by those the run really
// delivered: real SIGINTs that reached the interpreter ("signal" events) and
// KeyboardInterrupts a stream's write raised (a policy that never calls the
// stream's write never meets one). A Ctrl-C never delivered cannot be lost.
func interruptsDelivered(r *run) int {
	delivered := len(r.tr.Signals)
	for _, cp := range r.tr.Captures {
		for _, a := range cp.Attempts {
			if a.Raised == "KeyboardInterrupt" {
				delivered++
			}
		}
	}
	return min(r.c.Interrupts, delivered)
}

// lostInt: each Ctrl-C reaches the caller as a KeyboardInterrupt.
func lostInt(r *run) (string, bool) {
	if r.c.Interrupts == 0 {
		return "", false
	}
	want, kis := interruptsDelivered(r), 0
	for _, e := range r.tr.Exceptions {
		if e.Type == "KeyboardInterrupt" {
			kis++
		}
	}
	return fmt.Sprintf("%d Ctrl-C, %d KeyboardInterrupt reached the caller", want, kis), kis < want
}

// doubleInt: each Ctrl-C runs its handler once.
func doubleInt(r *run) (string, bool) {
	if r.c.Interrupts == 0 {
		return "", false
	}
	want := interruptsDelivered(r)
	return fmt.Sprintf("%d Ctrl-C, the SIGINT handler ran %d times", want, len(r.tr.Handlers)), len(r.tr.Handlers) > want
}

// lostCallback: every queued callback ran.
func lostCallback(r *run) (string, bool) {
	ran := map[string]bool{}
	for _, cb := range r.tr.Callbacks {
		ran[cb.ID] = true
	}
	return fmt.Sprintf("%d callbacks queued, %d ran", r.c.Callbacks, len(ran)), r.c.Callbacks > 0 && len(ran) < r.c.Callbacks
}

// misrouted: with sys.stderr replaced, a line reached fd 2 although the
// stream never refused it, outside the daemon rule (daemon.Unwinds) and the
// fatal-path rule (FatalPathLines).
func misrouted(r *run) (string, bool) {
	if !r.c.Replaced {
		return "", false
	}
	refused := map[string]bool{}
	for _, cp := range r.tr.Captures {
		for _, a := range cp.Attempts {
			if a.Raised != "" {
				for l := range completeLines([]byte(a.Text)) {
					refused[l] = true
				}
			}
		}
	}
	daemonRule := daemon.Unwinds(r.tr.Start.Platform, daemon.VersionHex(r.tr.Start.Python))
	fatalPath := FatalPathLines(r.tr, r.fd2)
	for _, l := range r.tr.Lines {
		esc := pytext.DecodeEscaped(l.B)
		onFD2 := r.fdLines[string(l.B)] > 0
		if !l.Replaced || !onFD2 || r.pyLines[esc] > 0 || refused[esc] || (l.Daemon && daemonRule) || fatalPath[l.Seq] {
			continue
		}
		if len(r.ev.Misrouted) < 5 {
			r.ev.Misrouted = append(r.ev.Misrouted, fmt.Sprintf("#%d %s: %q", l.Seq, l.Thread, clip(l.B)))
		}
	}
	return "sys.stderr was replaced and these lines went to fd 2 without it refusing them", len(r.ev.Misrouted) > 0
}

// FatalPathLines is MISROUTED's fatal-path rule (why it can be trusted:
// doc.go): the sequence numbers of the lines a run's fatal path left on fd 2,
// the fatal line and the kept lines its sink flushed just before it.
func FatalPathLines(tr *telemetry.Transcript, fd2 []byte) map[int]bool {
	exempt := map[int]bool{}
	if len(tr.Aborts) == 0 {
		return exempt
	}
	abortAt := tr.Aborts[0].At
	byBytes := map[string]telemetry.Line{}
	for _, l := range tr.Lines {
		byBytes[string(l.B)] = l
	}
	for _, f := range tr.Lines {
		if f.Level != "F" || f.At > abortAt {
			continue
		}
		fatalPos := bytes.Index(fd2, f.B)
		if fatalPos < 0 {
			continue
		}
		exempt[f.Seq] = true
		for _, fl := range tr.FatalFlushes {
			if fl.Fatal != f.Seq || fl.Thread != f.Thread || fl.At < f.At || fl.At > abortAt {
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

func raised(excs []telemetry.Exception, typ string) bool {
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

// OutOfOrder reports, for each thread, lines whose first occurrence on fd 2
// comes before that of a line the same thread logged earlier ("lines arrive
// complete and in order"; "fd 2 must show the context, then the fatal
// line"). Lines fd 2 never got are Judge's business (LOST), and repeats
// after a fallback are allowed: only first occurrences count. At most five
// problems are listed.
func OutOfOrder(tr *telemetry.Transcript, fd2 []byte) []string {
	byThread := map[string][]telemetry.Line{}
	var threads []string
	for _, l := range tr.Lines {
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
