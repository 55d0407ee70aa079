package daemon_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/cell"
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
		func(ctx SpecContext, spec cell.Spec, expected string, then suitekit.Then) {
			suitekit.Verify(ctx, spec, expected, then)
		},
		suitekit.Rows(
			suitekit.RowThen(cell.Spec{Scenario: "T1", Platform: "linux", Python: "3.13.7"}, diesWhereTheFramesSay, "CRASH", "OK", "CRASH", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "T2", Platform: "linux", Python: "3.13.8"}, "OK", "OK", "OK", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "T3", Platform: "linux", Python: "3.14"}, "OK", "MISROUTED", "OK", "MISROUTED", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "T4", Platform: "macos", Python: "3.12"}, "OK", "MISROUTED", "OK", "MISROUTED", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "T5", Platform: "linux", Python: "3.14"}, "HANG", "OK", "OK", "OK", "OK", "OK"),
			suitekit.Row(cell.Spec{Scenario: "T6", Platform: "macos", Python: "3.12"}, "HANG", "OK", "OK", "OK", "OK", "OK")),
	)
})
