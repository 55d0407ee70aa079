package ledger

// Over 400 lines on purpose: Judge and each verdict's check, in the order
// of precedence they are tried, are one reading of what a run did.

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
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
	Lines     int `json:"lines_logged"`
	Delivered int `json:"lines_delivered"`
	// Refused: lines that reached no stream because the kernel refused
	// their write(2) on fd 2 for good (EPIPE, ENOSPC, EIO): not the sink's
	// loss.
	Refused    int      `json:"lines_refused,omitempty"`
	Missing    []string `json:"missing,omitempty"`
	Misrouted  []string `json:"misrouted,omitempty"`
	Reordered  []string `json:"reordered,omitempty"`
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
	{verdict.Reordered, reordered},
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
	refused := kernelRefused(r.tr)
	countNotes(refused.whole)
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
		if refused.covers(l.B) {
			r.ev.Refused++
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

// refusedWrites is what the kernel refused for good on fd 2 (FD2Refused
// events, EAGAIN aside: "no room" is a full pipe, whose lines a sink must
// write later): the complete lines the refused writes offered, and the
// pieces of a line a write began or ended inside (a write that moved part
// of a line, then one refused the rest).
type refusedWrites struct {
	whole map[string]int
	heads [][]byte // a refused write's last bytes, no newline: a line's beginning
	tails [][]byte // a refused write's first bytes up to a newline: maybe a line's end
}

func kernelRefused(tr *telemetry.Transcript) refusedWrites {
	rw := refusedWrites{whole: map[string]int{}}
	for _, e := range telemetry.All[telemetry.FD2Refused](tr.Events) {
		if e.Errno == "EAGAIN" {
			continue
		}
		b := e.B
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			rw.tails = append(rw.tails, b[:i+1])
		}
		for l, n := range completeLines(b) {
			rw.whole[l] += n
		}
		if i := bytes.LastIndexByte(b, '\n'); i+1 < len(b) {
			rw.heads = append(rw.heads, b[i+1:])
		}
	}
	return rw
}

// covers reports whether the kernel refused (part of) line l for good, as
// its raw bytes (a C write) or its escaped text (a Python write).
func (rw refusedWrites) covers(l []byte) bool {
	for _, form := range [][]byte{l, []byte(pytext.DecodeEscaped(l))} {
		if rw.whole[string(form)] > 0 {
			return true
		}
		for _, t := range rw.tails {
			if bytes.HasSuffix(form, t) {
				return true
			}
		}
		for _, h := range rw.heads {
			if bytes.HasPrefix(form, h) {
				return true
			}
		}
	}
	return false
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
// the fatal line and the kept lines its sink flushed just before it (its
// call's, and any thread's kept process-wide).
func FatalPathLines(tr *telemetry.Transcript, fd2 []byte) map[int]bool {
	exempt := map[int]bool{}
	if len(tr.Aborts) == 0 {
		return exempt
	}
	abortAt := tr.Aborts[0].At
	refused := kernelRefused(tr)
	byBytes := map[string]telemetry.Line{}
	for _, l := range tr.Lines {
		byBytes[string(l.B)] = l
	}
	for _, f := range tr.Lines {
		if f.Level != "F" || f.At > abortAt {
			continue
		}
		fatalPos := bytes.Index(fd2, f.B)
		if fatalPos < 0 && refused.covers(f.B) {
			// The kernel refused the Fatal line's write for good: the
			// fatal path still ran, and ended where fd 2 ends.
			fatalPos = len(fd2)
		}
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
				if !ok || k.Seq >= f.Seq {
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

// parseNote reads the cap's note. Every complete line of every stream is
// asked: one without the note's fixed words is none, without the regular
// expression (4% of the suites' processes' CPU in a warm matrix).
func parseNote(line string) (lines, bytes int, ok bool) {
	if !strings.Contains(line, " bytes) left out") {
		return 0, 0, false
	}
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

// OutOfOrder is REORDERED's rule (docs/CONTRACT.md, "Order"): per thread,
// in each stream (fd 2, each in-memory stream), the first complete
// occurrence of a line comes after the first occurrences of the lines the
// same thread logged before it. A line that occurs again (a repeat) is
// allowed only when a write failed or was interrupted in the run (a stream's
// write raised, a write(2) gave up on EINTR, sys.stderr's buffer kept what
// an interrupted flush did not write, a failed flush resent its lines to
// fd 2, the kernel refused a write(2) on fd 2): the resend repeats what the
// failed write had already moved. Lines
// a stream never got are LOST's business, not this rule's. At most five
// problems are listed.
func OutOfOrder(tr *telemetry.Transcript, fd2 []byte) []string {
	var bad []string
	add := func(s string) {
		if len(bad) < 5 {
			bad = append(bad, s)
		}
	}
	repeatsAllowed := failedWrite(tr)
	streams := []struct {
		name  string
		lines []string
		key   func(telemetry.Line) string
	}{{"fd 2", lineList(fd2), func(l telemetry.Line) string { return string(l.B) }}}
	for _, cp := range tr.Captures {
		streams = append(streams, struct {
			name  string
			lines []string
			key   func(telemetry.Line) string
		}{cp.Stream, lineList([]byte(cp.Text)), func(l telemetry.Line) string { return pytext.DecodeEscaped(l.B) }})
	}
	for _, st := range streams {
		// Each logged line's place in its thread's order; a text logged
		// twice by one thread takes its places in turn.
		type logged struct {
			thread string
			seqs   []int // the sequence numbers with this text, in order
		}
		byText := map[string]*logged{}
		for _, l := range sortedLines(tr.Lines) {
			k := st.key(l)
			if byText[k] == nil {
				byText[k] = &logged{thread: l.Thread}
			}
			byText[k].seqs = append(byText[k].seqs, l.Seq)
		}
		used := map[string]int{}    // occurrences of each text so far
		lastSeq := map[string]int{} // per thread: the newest line seen first so far
		lastAt := map[string]int{}  // and its place in the stream
		for at, text := range st.lines {
			lg := byText[text]
			if lg == nil {
				continue // a note, a forwarder's own line: not a logged line
			}
			n := used[text]
			used[text]++
			if n >= len(lg.seqs) {
				if !repeatsAllowed {
					add(fmt.Sprintf("%s: %s: line #%d again at line %d, with no failed or interrupted write to resend it", st.name, lg.thread, lg.seqs[len(lg.seqs)-1], at+1))
				}
				continue
			}
			seq := lg.seqs[n]
			if prev, ok := lastSeq[lg.thread]; ok && seq < prev {
				add(fmt.Sprintf("%s: %s: line #%d at line %d, after #%d at line %d", st.name, lg.thread, seq, at+1, prev, lastAt[lg.thread]+1))
				continue
			}
			lastSeq[lg.thread], lastAt[lg.thread] = seq, at
		}
	}
	return bad
}

// reordered: OutOfOrder found a line out of its thread's order, or a repeat
// no failed write explains.
func reordered(r *run) (string, bool) {
	bad := OutOfOrder(r.tr, r.fd2)
	if len(bad) == 0 {
		return "", false
	}
	r.ev.Reordered = bad
	return "lines reached a stream out of the order their thread logged them", true
}

// failedWrite: the run shows a write that failed or was interrupted, after
// which the contract allows a resend to repeat lines.
func failedWrite(tr *telemetry.Transcript) bool {
	for _, cp := range tr.Captures {
		for _, a := range cp.Attempts {
			if a.Raised != "" {
				return true
			}
		}
	}
	if len(telemetry.All[telemetry.WriteInterrupted](tr.Events)) > 0 || len(telemetry.All[telemetry.Retained](tr.Events)) > 0 ||
		len(telemetry.All[telemetry.FD2Refused](tr.Events)) > 0 {
		return true
	}
	for _, fb := range telemetry.All[telemetry.Fallback](tr.Events) {
		if strings.HasPrefix(fb.Why, "flush raised") || strings.Contains(fb.Why, ": flush raised") {
			return true
		}
	}
	return false
}

// lineList is b's complete lines, in order (a line cut short is not one).
func lineList(b []byte) []string {
	var ls []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		ls = append(ls, string(b[:i+1]))
		b = b[i+1:]
	}
	return ls
}

func sortedLines(ls []telemetry.Line) []telemetry.Line {
	out := slices.Clone(ls)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}
