package random_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/random/search"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

// The random family: the profile's random knobs (ginkgo.yml) choose how
// many schedules, from which seed, over which policies; each run is an
// Entry named by its seed, so --focus 'seed=123\b' reruns one.
var _ = Describe("random fault schedules", func() {
	suitekit.LinuxOnly("real pipes, ptys and signals under every schedule")

	knobs := suitekit.Profile.Random
	seed := knobs.Seed
	if seed == 0 && knobs.Runs > 0 {
		seed = uint64(time.Now().UnixNano() % 1_000_000_000)
		fmt.Printf("random: the profile's seed is 0: picked %d (rerun with LOGJAM_RANDOM_SEED=%d)\n", seed, seed)
	}
	filter := schedule.Filter{Kind: knobs.Kind, Policies: knobs.Policies}
	var entries []TableEntry
	for i := 0; i < knobs.Runs; i++ {
		s := search.SeedOf(seed, i)
		sched := search.Draw(s, filter)
		entries = append(entries, Entry(fmt.Sprintf("R seed=%d [%s policy=%s]", s, sched.Kind, sched.Column()), Label(sched.Column()), s))
	}

	DescribeTable("a run of logjam or fixed is OK; a run of an older policy gives the same verdict twice",
		func(ctx SpecContext, seed uint64) {
			s := search.Draw(seed, filter)
			out := run(ctx, s)
			AddReportEntry("random", map[string]any{"seed": seed, "class": search.Class(s, out.Observed, out.Cycle), "observed": out.Observed,
				"reason": out.Reason, "schedule": string(s.JSON())}, ReportEntryVisibilityNever)
			if c := s.Column(); c == "logjam" || c == "fixed" {
				Expect(out.Observed).To(Equal(verdict.OK), func() string { return failure(seed, filter, s, out) })
				return
			}
			again := run(ctx, s)
			Expect(again.Observed).To(Equal(out.Observed), func() string {
				// Both plays' evidence: a flake is found by comparing them.
				return fmt.Sprintf("the replay gave another verdict (%s, then %s): a verdict that depends on timing is a scenario bug\n%s"+
					"the replay's evidence bundle: %s\n",
					out.Observed, again.Observed, failure(seed, filter, s, out), keep(".replay", seed, filter, s, again))
			})
		},
		entries)
})

func run(ctx SpecContext, s schedule.Schedule) *cell.Outcome {
	GinkgoHelper()
	out, err := search.Runner{Bin: suitekit.Bin, Profile: suitekit.Profile}.Run(ctx, s)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// failure says what failed and how to rerun it, and leaves an evidence
// bundle.
func failure(seed uint64, f schedule.Filter, s schedule.Schedule, out *cell.Outcome) string {
	dir := keep("", seed, f, s, out)
	msg := fmt.Sprintf("%s: observed %s\nreason: %s\n", search.Class(s, out.Observed, out.Cycle), out.Observed, out.Reason)
	if out.Cycle != "" {
		msg += "cycle: " + out.Cycle + "\n"
	}
	return msg + "rerun this run: " + search.SeedCommand(seed, f) + "\nreplay exactly: " + search.ReplayCommand(s) +
		"\nschedule: " + string(s.JSON()) + "\nevidence bundle: " + dir + "\n"
}

// keep leaves out's evidence bundle in the spec's folder (its name plus
// suffix) and says where, with the command that replays it.
func keep(suffix string, seed uint64, f schedule.Filter, s schedule.Schedule, out *cell.Outcome) string {
	name := CurrentSpecReport().LeafNodeText
	dir := report.BundleDir(suitekit.ReportsDir(), name) + suffix
	c := report.Cell{ID: "R", Name: name, Family: "random", Cell: scenario.Cell{Scenario: "R", Policy: s.Policy, Variant: s.Variant, Platform: s.Platform, Python: s.Python},
		Expected: verdict.OK, Observed: out.Observed, Ms: out.Ms, Rerun: search.SeedCommand(seed, f),
		Evidence: report.Evidence{Reason: out.Reason, Cycle: out.Cycle, Ledger: out.Ledger, Command: out.Command}}
	runner := search.Runner{Bin: suitekit.Bin, Profile: suitekit.Profile}
	b, keepErr := out.Bundle(c, search.Spec(s), runner.Prof(), suitekit.Bin)
	if err := report.WriteBundle(dir, b); err != nil {
		return "(could not write: " + err.Error() + ")"
	}
	if keepErr == nil {
		dir += " (logjam replay " + dir + ")"
	}
	return dir
}
