package daemon_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/failpoints"
	"logjam/harness/cell"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

// The signal each T1 CRASH cell must be killed by: the forced unwind of a
// daemon thread ends the process where the log path's C++ frames say.
var crashSignal = map[string]string{
	// pythonbuf's write releases Python objects without the GIL (the seed:
	// main "crashes this way too, with a segfault in its log function").
	"pystderr": "SIGSEGV",
	// The flush's catch (...) in ~RuntimeErrorScope swallows the unwind:
	// glibc aborts ("FATAL: exception not rethrown").
	"buffered": "SIGABRT",
}

// diesWhereTheFramesSay: a T1 crash names its signal, and glibc's message
// reaches fd 2 when the unwind met a catch (...).
func diesWhereTheFramesSay(out *cell.Outcome) {
	if sig, ok := crashSignal[out.Policy]; ok && out.Observed == verdict.Crash {
		Expect(out.Result.Signal).To(Equal(sig), "the signal that ended %s under %s", out.Scenario, out.Policy)
		Expect(out.Reason).To(ContainSubstring(sig), "the evidence names the signal")
	}
	if out.Policy == "buffered" {
		Expect(strings.Contains(string(out.FD2), "FATAL: exception not rethrown")).To(BeTrue(), "glibc's message on fd 2")
	}
}

var _ = Describe("Daemon threads at interpreter exit", func() {
	DescribeTable("neither crash nor hang the exit, and their lines reach sys.stderr or, by the daemon rule, fd 2",
		func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(daemonRows(nil), daemonRows(widened)),
	)
})

// widened holds a Python write's line between dropping the GIL and its
// write(2) for 10 ms: before the barrier on the graph, main finalized and
// exited in that window and the line was LOST. The verdicts must not move.
var widened = failpoints.Set{{Name: failpoints.PythonWriteGILDropped, Terms: "return(10)"}}

// daemonRows is T1-T6 with the failpoints fps.
func daemonRows(fps failpoints.Set) []TableEntry {
	spec := func(id, platform, python string) cell.Spec {
		return cell.Spec{Cell: scenario.Cell{Scenario: id, Platform: platform, Python: python}, Failpoints: fps}
	}
	return suitekit.Rows(
		suitekit.RowThen(spec("T1", "linux", "3.13.7"), diesWhereTheFramesSay, verdict.Crash, verdict.OK, verdict.Crash, verdict.OK, verdict.OK, verdict.OK),
		// T2, T5, T6 under pystderr and buffered: CRASH, not OK or HANG; the model was wrong (it had no
		// BufferedWriter lock): a daemon whose write through sys.stderr is queued for the GIL keeps that
		// lock through its fate, and the exit's flush_std_files dies of _enter_buffered_busy's fatal error
		// (docs/FINDINGS.md, "sys.stderr's BufferedWriter lock"). Not calibrated: no 3.13.8+, 3.14 or macOS here.
		suitekit.Row(spec("T2", "linux", "3.13.8"), verdict.Crash, verdict.OK, verdict.Crash, verdict.OK, verdict.OK, verdict.OK),
		suitekit.Row(spec("T3", "linux", "3.14"), verdict.OK, verdict.Misrouted, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK),
		// The boundary itself with sys.stderr captured: 3.13.8 hangs its
		// daemon threads, so no rule may send their lines past the capture.
		suitekit.Row(spec("T3", "linux", "3.13.8"), verdict.OK, verdict.Misrouted, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK),
		suitekit.Row(spec("T4", "macos", "3.12"), verdict.OK, verdict.Misrouted, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK),
		suitekit.Row(spec("T5", "linux", "3.14"), verdict.Crash, verdict.OK, verdict.Crash, verdict.OK, verdict.OK, verdict.OK),
		suitekit.Row(spec("T6", "macos", "3.12"), verdict.Crash, verdict.OK, verdict.Crash, verdict.OK, verdict.OK, verdict.OK))
}
