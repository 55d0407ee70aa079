package calibrate_test

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/calibrate"
	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/scenario"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

// The header whatever fd 2 is: logjam's real rows with fd 2 a UNIX socket
// (journald), and with /proc hidden from the child (no non-blocking twin of
// a tty), each judged against the row's simulated verdict. Files need no
// row of their own here: every file row already meets a refused
// non-blocking write (ext4 refuses RWF_NOWAIT: EOPNOTSUPP).
var _ = ginkgo.Describe("fd 2 variations", ginkgo.Label("calibrate"), func() {
	type variation struct{ fd2, row string }
	var es []ginkgo.TableEntry
	for _, v := range []variation{
		{calibrate.FD2Socket, "C1"}, {calibrate.FD2Socket, "I1"}, {calibrate.FD2Socket, "F1"},
		{calibrate.FD2Socket, "F3"}, {calibrate.FD2Socket, "F4"}, {calibrate.FD2Socket, "U1"},
		{calibrate.FD2NoProc, "P3"}, {calibrate.FD2NoProc, "F4"}, {calibrate.FD2NoProc, "C1"},
	} {
		if !keep("LOGJAM_CALIBRATE_ROWS", v.row) {
			continue
		}
		for _, in := range interps {
			n := fmt.Sprintf("%s real [policy=logjam fd2=%s py=%s]", v.row, v.fd2, in.Version)
			register(n, func(ctx context.Context) any { return playVariation(ctx, in, v.row, v.fd2) })
			es = append(es, ginkgo.Entry(n, in, v.row, v.fd2, ginkgo.Label("py"+in.Short())))
		}
	}
	ginkgo.DescribeTable("logjam beside the simulated cell",
		func(ctx ginkgo.SpecContext, in calibrate.Interpreter, rowID, fd2 string) {
			if in.Missing != "" {
				ginkgo.Skip("python " + in.Version + ": " + in.Missing)
			}
			name := ginkgo.CurrentSpecReport().LeafNodeText
			p := played(ctx, name).(*variationPlay)
			Expect(p.err).NotTo(HaveOccurred(), p.step)
			row, sc, sim, real := p.row, p.sc, p.sim, p.real
			if real.Observed != sim.Observed {
				c := report.Cell{ID: row.ID, Name: name, Family: family, Cell: sc, Expected: sim.Observed, Observed: real.Observed,
					Real: map[string]verdict.Verdict{in.Version: real.Observed}, Evidence: report.Evidence{Reason: real.Reason, Command: real.Command}}
				c.Bundle = report.BundleDir(reportsDir(), name) + ".real"
				_ = report.WriteBundle(c.Bundle, calibrate.Bundle(real, c))
				ginkgo.Fail(fmt.Sprintf("%s: simulated %s, real with fd 2 %s %s: %s (evidence: %s)", name, sim.Observed, fd2, real.Observed, real.Reason, c.Bundle))
			}
			ginkgo.GinkgoWriter.Printf("simulated %s | real (fd 2 %s) %s\n", sim.Observed, fd2, real.Observed)
		},
		es)
})

// variationPlay is one fd-2 variation played: the row's simulated cell
// under logjam and the real one with fd 2 as the variation arranges it.
type variationPlay struct {
	row       calibrate.Row
	sc        scenario.Cell
	sim, real *cell.Outcome
	step      string
	err       error
}

func playVariation(ctx context.Context, in calibrate.Interpreter, rowID, fd2 string) *variationPlay {
	p := &variationPlay{}
	dir, err := build(in)
	if err != nil {
		p.step, p.err = "building the extension", err
		return p
	}
	p.row, _ = calibrate.RowNamed(rowID)
	p.sc = scenario.Cell{Scenario: p.row.ID, Policy: "logjam", Platform: scenario.DefaultPlatform, Python: in.Version}
	spec := cell.Spec{Cell: p.sc}
	if info, err := scenario.Lookup(p.row.ID); err == nil && info.Contract.Ends == scenario.EndsKilled {
		spec.Deadline = p.row.Deadline
	}
	if p.sim, err = cell.Run(ctx, suitekit.Bin, spec, suitekit.Profile); err != nil {
		p.step, p.err = "running the simulated cell", err
		return p
	}
	if p.real, err = calibrate.Run(ctx, in, dir, p.row, "logjam", "", calibrate.Buffered, calibrate.Options{Scale: scale(), FD2: fd2}); err != nil {
		p.step, p.err = "running the real cell", err
	}
	return p
}
