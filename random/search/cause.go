package search

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"logjam/harness/cell"
	"logjam/scenario/schedule"
	"logjam/telemetry"
	"logjam/verdict"
)

// Cause names a failure by its evidence's route, not by the schedule's
// features: the verdict and what the ledger and the child saw (which
// lines were lost, on their way to which stream; which resources the
// wait-for cycle is made of; what raised). Two schedules that fail for
// one reason have one cause however different they look, so a search
// reports (and shrinks) each reason once.
func Cause(s schedule.Schedule, out *cell.Outcome) string {
	name := s.Column()
	if s.Lazy != nil {
		name = "lazyinit/" + name
	}
	c := name + " " + string(out.Observed)
	var why string
	switch out.Observed {
	case verdict.OK, verdict.Completed:
		return ""
	case verdict.Hang:
		why = hangCause(out)
	case verdict.Lost:
		why = lineCause(out, out.Ledger.Missing, "lost")
		if len(out.Ledger.Notes) > 0 {
			why += ", notes miscount"
		}
		if tr := out.Transcript; tr != nil && len(tr.Aborts) > 0 {
			why += ", then " + endOf(tr)
		}
	case verdict.Misrouted:
		why = lineCause(out, out.Ledger.Misrouted, "to fd 2")
	case verdict.BadEsc:
		why = escCause(out.Ledger.Detail)
	case verdict.Crash:
		why = digits.ReplaceAllString(firstLine(out.Reason), "N")
	default: // LOSTINT, DOUBLEINT, LOSTCALLBACK: the counts say it
		why = out.Ledger.Detail
	}
	if why == "" {
		return c
	}
	return c + ": " + why
}

var (
	digits = regexp.MustCompile(`[0-9]+`)
	seqRE  = regexp.MustCompile(`^#(\d+) `)
)

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// hangCause: the resources the reported cycle is made of, with the
// threads' and backends' names left out; or that no cycle was reported.
func hangCause(out *cell.Outcome) string {
	if out.Transcript == nil {
		return "no cycle"
	}
	var res []string
	for _, cy := range telemetry.All[telemetry.Cycle](out.Transcript.Events) {
		for _, e := range cy.Edges {
			r := e.Waits
			if strings.Contains(r, "workspace lock") {
				r = "a backend lock"
			}
			if !slices.Contains(res, r) {
				res = append(res, r)
			}
		}
		break // the first cycle is the one the verdict names
	}
	if len(res) == 0 {
		return "no cycle"
	}
	slices.Sort(res)
	return "cycle of " + strings.Join(res, " + ")
}

// lineCause: which kinds of lines the ledger listed (the first five it
// lists): whose (the main thread, another thread, a daemon, outside a
// call, the Fatal line) and on their way to which stream.
func lineCause(out *cell.Outcome, listed []string, what string) string {
	if out.Transcript == nil {
		return what
	}
	bySeq := map[int]telemetry.Line{}
	for _, l := range out.Transcript.Lines {
		bySeq[l.Seq] = l
	}
	var kinds []string
	for _, m := range listed {
		sm := seqRE.FindStringSubmatch(m)
		if sm == nil {
			continue
		}
		n, _ := strconv.Atoi(sm[1])
		l, ok := bySeq[n]
		if !ok {
			continue
		}
		k := lineKind(l)
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	return what + " " + strings.Join(kinds, "; ")
}

func lineKind(l telemetry.Line) string {
	who := "a thread's"
	switch {
	case l.Level == "F":
		who = "the Fatal line"
	case l.Daemon:
		who = "a daemon's"
	case !l.InCall:
		who = "outside a call"
	case l.Thread == "MainThread":
		who = "main's"
	}
	if l.Replaced {
		return who + " (sys.stderr replaced)"
	}
	return who
}

// endOf: how the run ended when it aborted.
func endOf(tr *telemetry.Transcript) string {
	for _, l := range tr.Lines {
		if l.Level == "F" {
			return "fatal"
		}
	}
	return "abort"
}

// escCause: what raised or leaked, without the text.
func escCause(detail string) string {
	if strings.HasPrefix(detail, "the call must raise") {
		return detail
	}
	if _, rest, ok := strings.Cut(detail, " raised "); ok {
		typ, _, _ := strings.Cut(rest, ":")
		if typ == "UnicodeDecodeError" {
			return "raised " + typ
		}
		return "raw bytes in a " + typ
	}
	return digits.ReplaceAllString(detail, "N")
}
