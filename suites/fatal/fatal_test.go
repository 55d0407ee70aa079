package fatal_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/harness/cell"
	"logjam/harness/ledger"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/telemetry"
	"logjam/verdict"
)

// f2Deadline is F2's cell deadline before scaling: the program blocks by
// design. In fast mode a cell ends as soon as the child says that both its
// threads wait for good (telemetry.MarkBlocked), in strict mode at this
// deadline: the same fd 2 either way.
const f2Deadline = 2 * time.Second

var _ = Describe("a call that crashes, hangs or logs a fatal line", func() {
	suitekit.LinuxOnly("a real SIGABRT after resetting Go's handler (rt_sigaction), and F4's one-page pipe (F_SETPIPE_SZ, POLLOUT per page slot)")

	DescribeTable("leaves the call's lines, and a fatal line's context before it, on a stream that outlives the process",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "F1"}}, verdict.OK, verdict.OK, verdict.Lost, verdict.OK, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "F2"}, Deadline: f2Deadline}, judgedAtTheDeadline, verdict.OK, verdict.OK, verdict.Lost, verdict.OK, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "F3"}}, contextBeforeTheFatalLine, verdict.Lost, verdict.Misrouted, verdict.Lost, verdict.Lost, verdict.OK, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "F4"}}, both(linesAroundTheStall, contextBeforeTheFatalLine), verdict.OK, verdict.OK, verdict.Lost, verdict.Lost, verdict.OK, verdict.OK),
			// F5: another thread's lines the sink kept process-wide die with the abort unless the fatal path
			// writes them; buffered and merged send them to fd 2 at once (MISROUTED, after LOST for buffered).
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "F5"}}, both(contextBeforeTheFatalLine, otherThreadInTheFatalPath), verdict.Lost, verdict.Misrouted, verdict.Lost, verdict.Lost, verdict.Misrouted, verdict.OK),
			// F6, F7: fd 2 an in-process forwarder's pipe; only logjam's outliving copy of fd 2 outlives the process.
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "F6"}}, toTheOutlivingCopy, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK),
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "F7"}}, toTheOutlivingCopy, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK),
			// F8: captured before the import; ipykernel's OutStream names its saved copy of the old fd 2.
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "F8"}}, toTheOutlivingCopy, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK),
			// F9: the contract's edge (docs/CONTRACT.md): nothing names wurlitzer's saved copy, and no sink gets the lines out.
			suitekit.Row(cell.Spec{Cell: scenario.Cell{Scenario: "F9"}}, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost),
			// F10: a crash handler's Fatal line from a signal handler that interrupted logjam keeping a line
			// process-wide, its lock held: the fatal path never waits for its own thread, and writes the keep.
			suitekit.RowThen(cell.Spec{Cell: scenario.Cell{Scenario: "F10"}}, keptLinesThenTheCrashLine, verdict.Lost, verdict.Misrouted, verdict.Misrouted, verdict.Misrouted, verdict.Misrouted, verdict.OK)),
	)
})

// judgedAtTheDeadline: F2 blocks by design; it is judged once killed (at
// its deadline, or in fast mode once it said nothing in it moves again),
// with no wait-for cycle reported.
func judgedAtTheDeadline(out *cell.Outcome) {
	By("judging a blocked-by-design child once it is killed, with no wait-for cycle reported")
	Expect(out.Cycle).To(BeEmpty())
	Expect(out.Result.Killed).To(BeTrue())
	if suitekit.Profile.Mode == "fast" {
		By("ending it once the child said both threads wait for good, not at the deadline")
		Expect(out.Reason).To(ContainSubstring("every thread waits for what only the process could end"))
	}
}

// linesAroundTheStall: F4 logs while the parent does not read fd 2, and
// after it reads again (buffered keeps every line of a call: no write of
// its feels the stall, so the parent never reads again).
func linesAroundTheStall(out *cell.Outcome) {
	if out.Policy == "buffered" {
		return
	}
	By("stalling fd 2 inside the call: lines are logged while the parent does not read, and after it reads again")
	during, after, resumed := linesAroundStall(out)
	Expect(resumed).To(BeTrue(), "no write felt the stall, so the parent never read again")
	Expect(during).To(BeNumerically(">", 0), "no line logged during the stall")
	Expect(after).To(BeNumerically(">", 0), "no line logged after the stall ended, before the fatal line")
}

// contextBeforeTheFatalLine: an OK leaves every line of the call on fd 2,
// in order, then the fatal line; the merged fix owes it to its fatal path.
func contextBeforeTheFatalLine(out *cell.Outcome) {
	inOrderWhenOK(out, "finding on fd 2 every line of the call before the fatal line, in the order logged, then the fatal line")
	if out.Policy == "merged" {
		By("owing the merged fix's OK to its fatal path: the kept context went to fd 2 before the fatal line")
		Expect(fatalPathWrote(out)).To(BeNumerically(">", 0))
	}
}

func both(a, b suitekit.Then) suitekit.Then {
	return func(out *cell.Outcome) { a(out); b(out) }
}

// linesAroundStall counts the non-fatal lines logged (child's clock) while
// the parent's reader was stalled (from the start to the child's resume
// mark), and after the resume.
func linesAroundStall(out *cell.Outcome) (during, after int, resumed bool) {
	var to float64
	for _, m := range out.Transcript.Marks {
		if m.Name == telemetry.MarkFD2Resume {
			to, resumed = m.T, true
		}
	}
	if !resumed {
		return 0, 0, false
	}
	for _, l := range out.Transcript.Lines {
		switch {
		case l.Level == "F":
		case l.T < to:
			during++
		default:
			after++
		}
	}
	return during, after, true
}

// fatalPathWrote counts the kept lines the sink's fatal path wrote to fd 2
// (its "fatal-flush" telemetry).
func fatalPathWrote(out *cell.Outcome) int {
	n := 0
	for _, f := range out.Transcript.FatalFlushes {
		n += len(f.Written)
	}
	return n
}

// otherThreadInTheFatalPath: logjam's OK on F5 is owed to its fatal path,
// which wrote T1's lines (kept process-wide for the capture) to fd 2.
func otherThreadInTheFatalPath(out *cell.Outcome) {
	if out.Policy != "logjam" {
		return
	}
	By("owing logjam's OK to its fatal path: it wrote the other thread's kept lines to fd 2 before the fatal line")
	theirs := 0
	for _, f := range out.Transcript.FatalFlushes {
		for _, w := range f.Written {
			for _, l := range out.Transcript.Lines {
				if l.Thread == "T1" && string(l.B) == string(w) {
					theirs++
				}
			}
		}
	}
	Expect(theirs).To(Equal(2))
}

// toTheOutlivingCopy: on a forwarder's pipe (F6, F7) an OK leaves the call's
// lines, in order, then the fatal line on the parent's stream, and logjam
// owes it to its fatal path's write to fd 2's outliving copy: the call kept
// its 3 lines (the forwarder needs the GIL the call holds), and the fatal
// path wrote them there.
func toTheOutlivingCopy(out *cell.Outcome) {
	inOrderWhenOK(out, "finding on the parent's stream every line of the call before the fatal line, in the order logged, then the fatal line")
	if out.Policy != "logjam" {
		return
	}
	By("owing logjam's OK to its fatal path: the call's kept lines went to fd 2's outliving copy, not into the forwarder's pipe")
	var to []telemetry.FatalFlush
	for _, f := range out.Transcript.FatalFlushes {
		if f.To == telemetry.ToOutlivingCopy {
			to = append(to, f)
		}
	}
	Expect(to).To(HaveLen(1))
	Expect(to[0].Written).To(HaveLen(contextLines))
}

// contextLines is the context every F program logs before its end.
const contextLines = 3

// keptLinesThenTheCrashLine: F10 is OK only with every line on fd 2, in
// order, before the crash handler's Fatal line, and logjam owes it to its
// fatal path, run on the thread that held the keep's lock: it wrote the
// thread's 2 lines kept process-wide.
func keptLinesThenTheCrashLine(out *cell.Outcome) {
	inOrderWhenOK(out, "finding on fd 2 both lines in the order logged, then the crash handler's Fatal line")
	if out.Policy != "logjam" {
		return
	}
	By("owing logjam's OK to its fatal path, run on the thread that held the keep's lock: it wrote the 2 kept lines")
	written := 0
	for _, f := range out.Transcript.FatalFlushes {
		written += len(f.Written)
	}
	Expect(written).To(Equal(2))
}

// inOrderWhenOK: an OK cell's lines are on its stream in the order logged
// (what says where and which, for the spec's report).
func inOrderWhenOK(out *cell.Outcome, what string) {
	if out.Observed == verdict.OK {
		By(what)
		Expect(ledger.OutOfOrder(out.Transcript, out.FD2)).To(BeEmpty())
	}
}
