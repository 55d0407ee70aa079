// Package verdict is the vocabulary of what a cell's child did, in one word,
// and the precedence of those words, written once: the watchdog, the ledger,
// the cell and the reports all speak it.
package verdict

import "strings"

// Verdict is what a run did, in one word.
type Verdict string

// The verdicts.
const (
	// Hang: did not finish (the deadline passed, or a cycle was reported).
	Hang Verdict = "HANG"
	// Interrupted: the run was cancelled from outside (not the child's doing).
	Interrupted Verdict = "INTERRUPTED"
	// NotRun: the run was interrupted before this cell started; there is
	// no observation. The matrix shows it so that no planned cell vanishes.
	NotRun Verdict = "NOTRUN"
	// Error: the cell could not be judged: its run could not start (bad
	// input, refused before the child starts), or the scenario refused to go
	// on because a state it promised did not hold. It says nothing about the
	// policy, and counts as not as expected.
	Error Verdict = "ERROR"
	// Crash: killed by a signal nobody expected.
	Crash Verdict = "CRASH"
	// Failed: exited non-zero (or ended otherwise than its contract says).
	Failed Verdict = "FAILED"
	// NoMarker: exited 0 without printing the marker line.
	NoMarker Verdict = "NOMARKER"
	// Completed: the watchdog's word for exit 0 with the marker; the cell
	// then asks the ledger.
	Completed Verdict = "COMPLETED"
	// BadEsc: UnicodeDecodeError, raw invalid bytes in Python text, or the
	// wrong exception type.
	BadEsc Verdict = "BADESC"
	// Lost: a line reached no stream.
	Lost Verdict = "LOST"
	// LostInt: a Ctrl-C never reached the caller.
	LostInt Verdict = "LOSTINT"
	// DoubleInt: a Ctrl-C's handler ran twice.
	DoubleInt Verdict = "DOUBLEINT"
	// LostCallback: a queued callback never ran.
	LostCallback Verdict = "LOSTCALLBACK"
	// Misrouted: sys.stderr was replaced and lines bypassed it.
	Misrouted Verdict = "MISROUTED"
	// Reordered: per thread, lines reached a stream out of the order they
	// were logged, or repeated where no failed write explains it.
	Reordered Verdict = "REORDERED"
	// OK: none of the above.
	OK Verdict = "OK"
)

// Precedence is the order in which verdicts are decided: the first that
// applies wins. The watchdog decides up to Completed from how the child
// ended; after that, the ledger's checks run in this order.
var Precedence = []Verdict{Hang, Interrupted, NotRun, Error, Crash, Failed, NoMarker, Completed,
	BadEsc, Lost, LostInt, DoubleInt, LostCallback, Misrouted, Reordered, OK}

// Rank is v's place in Precedence (len(Precedence) for an unknown word).
func Rank(v Verdict) int {
	for i, p := range Precedence {
		if p == v {
			return i
		}
	}
	return len(Precedence)
}

// Known reports whether v is a word of the vocabulary (Precedence).
func Known(v Verdict) bool { return Rank(v) < len(Precedence) }

// labelKey is the key of the Ginkgo label set that carries a cell's
// expected verdict: a cell expected to hang is labelled "expect:HANG", so
// --label-filter 'expect: containsAny {HANG}' selects it and a dry run
// reads it (logjam list -expected).
const labelKey = "expect:"

// Label is the label that carries v as a cell's expected verdict.
func Label(v Verdict) string { return labelKey + string(v) }

// FromLabel is the expected verdict a label carries, if it is one.
func FromLabel(l string) (Verdict, bool) {
	v, ok := strings.CutPrefix(l, labelKey)
	return Verdict(v), ok && Known(Verdict(v))
}
