package lazyinit_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/harness/cell"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

// The lazy device initialization matrix (docs/SCENARIOS.md), every row for the
// cuda-, xpu- and mtia-like backend. The xpu and mtia rows run the same state
// machine with their own lock and flags: the seed establishes the old
// callback-under-lock shape in their source, not a runtime deadlock, so those
// rows say what that shape does, not what torch.xpu / torch.mtia were seen
// to do. Entry names start with the scenario id: --focus 'L2' reruns only L2.
var _ = DescribeTable("lazy device initialization",
	func(ctx SpecContext, spec cell.Spec, expected verdict.Verdict, _ suitekit.Then) {
		out := suitekit.Check(ctx, spec, expected)
		if expected == verdict.Hang {
			// Every hang of this family is one thread waiting for its own
			// non-reentrant _initialization_lock.
			Expect(out.Cycle).To(ContainSubstring("waits for %s _initialization_lock, which it holds itself", spec.Backend),
				"the cycle must name the self-wait")
		}
		if out.Result != nil && out.Result.Cycle != nil {
			// From the cycle forming (child clock, ms since the runtime
			// started) to the child's end (watchdog clock, ms since exec):
			// out.Ms at microsecond precision.
			ms := float64(out.Result.Duration.Microseconds()) / 1000
			AddReportEntry("cycle-to-verdict-ms", fmt.Sprintf("%.3f", ms-out.Result.Cycle.T), ReportEntryVisibilityNever)
		}
	},
	// L1: initialized; the callback re-enters through set_rng_state.
	// L2: queued before init; during the drain the callback re-enters through manual_seed.
	// L3: forced race: A passes the fast-path checks and pauses before the lock;
	//     B initializes and drains; A goes on; the callback re-enters.
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "old", Backend: "cuda"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "initfast", Backend: "cuda"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "norace", Backend: "cuda"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "fixed", Backend: "cuda"}}, verdict.OK),

	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "old", Backend: "xpu"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "initfast", Backend: "xpu"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "norace", Backend: "xpu"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "fixed", Backend: "xpu"}}, verdict.OK),

	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "old", Backend: "mtia"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "initfast", Backend: "mtia"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "norace", Backend: "mtia"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L1", Variant: "fixed", Backend: "mtia"}}, verdict.OK),

	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "old", Backend: "cuda"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "initfast", Backend: "cuda"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "norace", Backend: "cuda"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "fixed", Backend: "cuda"}}, verdict.OK),

	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "old", Backend: "xpu"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "initfast", Backend: "xpu"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "norace", Backend: "xpu"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "fixed", Backend: "xpu"}}, verdict.OK),

	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "old", Backend: "mtia"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "initfast", Backend: "mtia"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "norace", Backend: "mtia"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L2", Variant: "fixed", Backend: "mtia"}}, verdict.OK),

	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "old", Backend: "cuda"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "initfast", Backend: "cuda"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "norace", Backend: "cuda"}}, verdict.LostCallback),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "fixed", Backend: "cuda"}}, verdict.OK),

	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "old", Backend: "xpu"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "initfast", Backend: "xpu"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "norace", Backend: "xpu"}}, verdict.LostCallback),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "fixed", Backend: "xpu"}}, verdict.OK),

	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "old", Backend: "mtia"}}, verdict.Hang),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "initfast", Backend: "mtia"}}, verdict.OK),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "norace", Backend: "mtia"}}, verdict.LostCallback),
	suitekit.Cell(cell.Spec{Cell: scenario.Cell{Scenario: "L3", Variant: "fixed", Backend: "mtia"}}, verdict.OK),
)
