package random_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/random/search"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

// Every matrix row the generator can express is a schedule: played under
// each policy (or lazy-init variant), it gives the verdicts of the row's
// Entry in its family's suite (suites/<family>/*_test.go; the verdicts are
// copied from there, in axes.Policies' order). A row's schedule is what
// the generator could draw (inside the contract, or on the edge the row
// itself stands on); the rows it cannot express are listed below with the
// reason, so the list says where random search cannot go.
type matrixRow struct {
	row, schedule string
	verdicts      []verdict.Verdict // pystderr, fd2, buffered, adaptive, merged, logjam; or old, initfast, norace, fixed
}

var rowSchedules = []matrixRow{
	// D3-D5, F6, F7, F10, I8: the workers, fork, forwarder-fatal, crash and handler axes play the rows of the
	// mechanisms people report; D4 logs 64 lines of 100 bytes a worker (the row 128) to fill the same one-page pipe.
	{"D3", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I","pool":{"workers":2,"lines":8}}]}]}}`,
		[]verdict.Verdict{verdict.Hang, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"D4", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":100,"level":"I","pool":{"workers":2,"lines":64}}]}]}}`,
		[]verdict.Verdict{verdict.Hang, verdict.Hang, verdict.Hang, verdict.Hang, verdict.Hang, verdict.OK}},
	{"D5", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":1,"size":80,"level":"I"}]}],"fork":{"held":true,"lines":1}}}`,
		[]verdict.Verdict{verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"F6", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"E"}]}],"abort":{"fatal":true,"after":3}}}`,
		[]verdict.Verdict{verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK}},
	{"F7", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"ipykernel","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"E"}]}],"abort":{"fatal":true,"after":3}}}`,
		[]verdict.Verdict{verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK}},
	{"F10", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"outside":2,"crash":{"at":2}}}`,
		[]verdict.Verdict{verdict.Lost, verdict.Misrouted, verdict.Misrouted, verdict.Misrouted, verdict.Misrouted, verdict.OK}},
	{"I8", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"line","ms":200,"sigint":true}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":48,"size":73,"level":"I"}]}],"handler":"logging"}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Lost, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	// E1-E4: the schedule counts fd 2's write calls as the row's failpoint does.
	{"E1", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"errors":{"errno":"EPIPE","after":2}},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":6,"size":80,"level":"I"}]}],"outside":4}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"E2", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file","errors":{"errno":"ENOSPC","after":2}},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":6,"size":80,"level":"I"}]}],"outside":4}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"E3", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file","errors":{"errno":"EIO","after":2,"times":1}},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":6,"size":80,"level":"I"}]}],"outside":4}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"E4", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"errors":{"errno":"EAGAIN","after":2,"times":3}},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":6,"size":80,"level":"I"}]}],"outside":4}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK}},
	{"E3 stderr=unbuffered", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","buffering":"unbuffered","sink":{"fd2":{"kind":"file","errors":{"errno":"EIO","after":2,"times":1}},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":6,"size":80,"level":"I"}]}],"outside":4}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"E4 stderr=unbuffered", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","buffering":"unbuffered","sink":{"fd2":{"kind":"pipe","capacity":4096,"errors":{"errno":"EAGAIN","after":2,"times":3}},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":6,"size":80,"level":"I"}]}],"outside":4}}`,
		[]verdict.Verdict{verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK}},
	{"C1", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":5,"size":80,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"C2", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"oserror","k":1},"threads":[{"calls":[{"backend":0,"lines":5,"size":80,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"C3", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":200,"size":1024,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"F1", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"E"}]}],"abort":{"after":3}}}`,
		[]verdict.Verdict{verdict.OK, verdict.OK, verdict.Lost, verdict.OK, verdict.OK, verdict.OK}},
	{"F3", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"E"}]}],"abort":{"fatal":true,"after":3}}}`,
		[]verdict.Verdict{verdict.Lost, verdict.Misrouted, verdict.Lost, verdict.Lost, verdict.OK, verdict.OK}},
	{"F4", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stall_ms":200},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":20,"size":230,"level":"E"}]}],"abort":{"fatal":true,"after":3}}}`,
		[]verdict.Verdict{verdict.OK, verdict.OK, verdict.Lost, verdict.Lost, verdict.OK, verdict.OK}},
	// F5: T1 runs while the main thread's first call (no line) yields; with sys.stderr captured its lines outside a
	// call are kept process-wide until the Fatal line of the main thread's second call.
	{"F5", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I","yield":true},{"backend":0,"lines":0,"size":80,"level":"E"}]},{"calls":null,"outside":2}],"abort":{"fatal":true,"after":3}}}`,
		[]verdict.Verdict{verdict.Lost, verdict.Misrouted, verdict.Lost, verdict.Lost, verdict.Misrouted, verdict.OK}},
	{"I1", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":5,"size":80,"level":"I"}]}],"sigint":"line","sigint_at":3}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	// I2's reader resumes once the SIGINT reached the model and the main
	// thread waits for room again: a stall's SIGINT does the same.
	{"I2", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"line","ms":200,"sigint":true}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":48,"size":73,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Lost, verdict.Lost, verdict.DoubleInt, verdict.DoubleInt, verdict.OK}},
	// I7: I2 with a second Ctrl-C once the first reached the model and
	// the main thread waits for room anew.
	{"I7", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"line","ms":200,"sigint":true,"twice":true}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":48,"size":73,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK}},
	{"I7 stderr=unbuffered", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","buffering":"unbuffered","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"line","ms":200,"sigint":true,"twice":true}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":48,"size":73,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Lost, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK}},
	{"I3", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"interrupt","k":1,"how":"before"},"threads":[{"calls":[{"backend":0,"lines":5,"size":80,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Misrouted, verdict.Lost, verdict.OK, verdict.OK, verdict.OK}},
	{"I4", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"interrupt","k":1,"how":"half"},"threads":[{"calls":[{"backend":0,"lines":5,"size":80,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Misrouted, verdict.Lost, verdict.OK, verdict.OK, verdict.OK}},
	{"I5", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"interrupt","k":1,"how":"before"},"threads":[{"calls":[{"backend":0,"lines":5,"size":80,"level":"I"}]}],"sigint_ignored":true}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Misrouted, verdict.Lost, verdict.LostInt, verdict.LostInt, verdict.OK}},
	{"I6", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"signalwait"},"threads":[{"calls":[{"backend":0,"lines":5,"size":80,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.Crash, verdict.Misrouted, verdict.Lost, verdict.DoubleInt, verdict.DoubleInt, verdict.OK}},
	{"P1", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"ipykernel","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":128,"size":127,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.OK, verdict.Hang, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"P2", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":128,"size":127,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.OK, verdict.Hang, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"P3", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pty","stall_ms":400},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":240,"size":145,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"P4", `{"kind":"sink","policy":"logjam","platform":"macos","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":128,"size":127,"level":"I"}]}]}}`,
		[]verdict.Verdict{verdict.OK, verdict.Hang, verdict.OK, verdict.Hang, verdict.OK, verdict.OK}},
	{"P5", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stall_ms":200},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":20,"size":230,"level":"E"}]}],"abort":{"after":1}}}`,
		[]verdict.Verdict{verdict.OK, verdict.OK, verdict.Lost, verdict.Lost, verdict.Lost, verdict.OK}},
	{"P6", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"ipykernel","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"outside":128,"outside_text":{"size":127}}}`,
		[]verdict.Verdict{verdict.OK, verdict.Hang, verdict.Hang, verdict.Hang, verdict.Hang, verdict.OK}},
	{"T1", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.13.7","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"daemons":2}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.Crash, verdict.OK, verdict.OK, verdict.OK}},
	{"T2", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.13.8","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"daemons":2}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.Crash, verdict.OK, verdict.OK, verdict.OK}},
	{"T3", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.14","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"daemons":2}}`,
		[]verdict.Verdict{verdict.OK, verdict.Misrouted, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK}},
	{"T4", `{"kind":"sink","policy":"logjam","platform":"macos","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"daemons":2}}`,
		[]verdict.Verdict{verdict.OK, verdict.Misrouted, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK}},
	{"U2", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I","fails":true,"fail_chars":43}]}]}}`,
		[]verdict.Verdict{verdict.BadEsc, verdict.BadEsc, verdict.BadEsc, verdict.BadEsc, verdict.OK, verdict.OK}},
	{"U3", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":5,"size":250,"level":"E","cjk":true,"fails":true,"fail_chars":30}]}]}}`,
		[]verdict.Verdict{verdict.BadEsc, verdict.BadEsc, verdict.BadEsc, verdict.OK, verdict.OK, verdict.OK}},
	{"T1 +python-write-gil-dropped", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.13.7","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"daemons":2,"gil_dropped_ms":10}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.Crash, verdict.OK, verdict.OK, verdict.OK}},
	{"T2 +python-write-gil-dropped", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.13.8","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"daemons":2,"gil_dropped_ms":10}}`,
		[]verdict.Verdict{verdict.Crash, verdict.OK, verdict.Crash, verdict.OK, verdict.OK, verdict.OK}},
	{"T3 +python-write-gil-dropped", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.14","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"daemons":2,"gil_dropped_ms":10}}`,
		[]verdict.Verdict{verdict.OK, verdict.Misrouted, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK}},
	{"T4 +python-write-gil-dropped", `{"kind":"sink","policy":"logjam","platform":"macos","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"daemons":2,"gil_dropped_ms":10}}`,
		[]verdict.Verdict{verdict.OK, verdict.Misrouted, verdict.OK, verdict.Misrouted, verdict.OK, verdict.OK}},
	{"I1 stderr=unbuffered", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","buffering":"unbuffered","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":5,"size":80,"level":"I"}]}],"sigint":"line","sigint_at":3}}`,
		[]verdict.Verdict{verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"U2 python=3.10", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.10","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I","fails":true,"fail_chars":43}]}]}}`,
		[]verdict.Verdict{verdict.OK, verdict.OK, verdict.OK, verdict.BadEsc, verdict.OK, verdict.OK}},
	{"U3 python=3.10", `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.10","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":5,"size":250,"level":"E","cjk":true,"fails":true,"fail_chars":30}]}]}}`,
		[]verdict.Verdict{verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}},
	{"L1", `{"kind":"lazyinit","variant":"fixed","platform":"linux","python":"3.12","lazy":{"backend":"cuda","ops":["init","call-set-rng"]}}`,
		[]verdict.Verdict{verdict.Hang, verdict.OK, verdict.OK, verdict.OK}},
	{"L2", `{"kind":"lazyinit","variant":"fixed","platform":"linux","python":"3.12","lazy":{"backend":"xpu","ops":["call-seed","init"]}}`,
		[]verdict.Verdict{verdict.Hang, verdict.Hang, verdict.OK, verdict.OK}},
	{"L3", `{"kind":"lazyinit","variant":"fixed","platform":"linux","python":"3.12","lazy":{"backend":"mtia","race":true,"ops":[]}}`,
		[]verdict.Verdict{verdict.Hang, verdict.OK, verdict.LostCallback, verdict.OK}},
}

// rowsNotExpressed are the matrix rows no schedule can play, and why.
var rowsNotExpressed = map[string]string{
	"D1":    "the lines are logged by a failing backend load under its lock, not by a call (no load-failure path in a schedule)",
	"D2":    "D1 with a slow sys.stderr: the same load-failure path",
	"F2":    "a call that blocks forever holding the GIL, judged at the deadline: no schedule ends killed",
	"T5":    "finalization destroys a backend whose lock a daemon holds: a schedule's daemons hold no lock at teardown",
	"T6":    "T5 on the macos platform",
	"U1":    "an exception message of invalid bytes: a schedule's failing call raises a message of three-byte characters",
	"C4":    "a sys.stderr whose write fails once, then works: a schedule's failing stream fails from its K-th write on",
	"F8":    "ipykernel's capture made before the module was imported: a schedule's forwarder captures fd 2 after it",
	"F9":    "wurlitzer's capture made before the module was imported: a schedule's forwarder captures fd 2 after it",
	"H0-H6": "the harness rows test the watchdog and the runner (a probe failpoint, exit codes, signals, a grandchild), not the log path",
}

var _ = Describe("every matrix row the generator can express", func() {
	suitekit.LinuxOnly("real pipes, ptys and signals under every schedule")

	var entries []TableEntry
	for _, r := range rowSchedules {
		variants := schedule.SinkPolicies
		if strings.Contains(r.schedule, `"kind":"lazyinit"`) {
			variants = schedule.LazyVariants
		}
		for i, p := range variants {
			if suitekit.Profile.Random.OwnRowsOnly() && p != "logjam" && p != "fixed" {
				continue // the older columns' replays: nightly and CI (ginkgo.yml, rows)
			}
			js := strings.Replace(r.schedule, `"policy":"logjam"`, fmt.Sprintf("%q:%q", "policy", p), 1)
			js = strings.Replace(js, `"variant":"fixed"`, fmt.Sprintf("%q:%q", "variant", p), 1)
			decorations := []any{Label("row-schedule", p), js, r.verdicts[i]}
			if strings.Contains(r.schedule, `"stall_ms":400`) {
				decorations = append(decorations, SpecPriority(1)) // P3's terminal pauses 400 ms: started first
			}
			entries = append(entries, Entry(fmt.Sprintf("matrix row %s as a schedule, policy %s", r.row, p), decorations...))
		}
	}

	It("has a verdict for each policy of each row, and lists each row it leaves out with a reason", func() {
		for _, r := range rowSchedules {
			s, err := schedule.Decode(r.schedule)
			Expect(err).NotTo(HaveOccurred(), r.row)
			want := len(schedule.SinkPolicies)
			if s.Lazy != nil {
				want = len(schedule.LazyVariants)
			}
			Expect(r.verdicts).To(HaveLen(want), r.row)
			Expect(rowsNotExpressed).NotTo(HaveKey(r.row))
		}
		for row, why := range rowsNotExpressed {
			Expect(why).NotTo(BeEmpty(), row)
		}
		played := map[string]bool{}
		for _, r := range rowSchedules {
			played[strings.Fields(r.row)[0]] = true
		}
		for _, in := range scenario.All() {
			if in.Family == "random" {
				continue // R, the program every schedule is played by
			}
			_, left := rowsNotExpressed[in.ID]
			if strings.HasPrefix(in.ID, "H") {
				_, left = rowsNotExpressed["H0-H6"]
			}
			Expect(played[in.ID] || left).To(BeTrue(), "row %s of the catalogue is neither played as a schedule nor listed in rowsNotExpressed with why", in.ID)
		}
	})

	DescribeTable("gives the row's verdict",
		func(ctx SpecContext, js string, want verdict.Verdict) {
			s, err := schedule.Decode(js)
			Expect(err).NotTo(HaveOccurred())
			out := run(ctx, s)
			Expect(out.Observed).To(Equal(want), func() string {
				return fmt.Sprintf("%s: %s (%s)\nreplay: %s", search.Class(s, out.Observed, out.Cycle), out.Observed, out.Reason, search.ReplayCommand(s))
			})
		},
		entries)
})
