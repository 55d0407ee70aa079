package suitekit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"logjam/harness/runner"
	"logjam/internal/claim"
	"logjam/internal/shard"
)

// skipOthers skips, before anything runs, each spec that belongs to
// another shard than LOGJAM_SHARD's (logjam chaos -shard K/N), then each
// that another spec process of the family claimed first (LOGJAM_CLAIMS:
// logjam chaos shares a family's specs among its processes). A malformed
// value ends the process with one line and status 2.
func skipOthers() {
	s, err := shard.FromEnv()
	var claims *claim.Claimer
	if err == nil {
		claims, err = claim.FromEnv()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "logjam: %v\n", err)
		os.Exit(2)
	}
	if s.All() && claims == nil {
		return
	}
	ginkgo.BeforeEach(func() {
		sr := ginkgo.CurrentSpecReport()
		name := sr.FullText()
		if !s.Has(name) {
			ginkgo.Skip(shard.SkipMessage + s.String())
		}
		if claims == nil {
			return
		}
		mine, err := claims.Take(name, func() []byte { return claimed(sr) })
		if err != nil {
			ginkgo.Fail(err.Error())
		}
		if !mine {
			ginkgo.Skip(claim.SkipMessage)
		}
	})
}

// ReportsDir is where evidence bundles go: LOGJAM_REPORTS (logjam chaos
// -out), else reports/ at the module root.
func ReportsDir() string {
	if d := os.Getenv("LOGJAM_REPORTS"); d != "" {
		return d
	}
	return filepath.Join(Root, "reports")
}

// repeat is the repeat this run is (LOGJAM_REPEAT, set by logjam chaos), 0
// outside a repeated run.
func repeat() int {
	n, _ := strconv.Atoi(os.Getenv("LOGJAM_REPEAT"))
	return n
}

// claimed is what a claim holds: the spec as the runner reports it when
// the process that claimed it died before it reported it (where it is, its
// texts and labels; runner.mergeReports marks it failed).
func claimed(sr types.SpecReport) []byte {
	b, _ := json.Marshal(types.SpecReport{ContainerHierarchyTexts: sr.ContainerHierarchyTexts,
		ContainerHierarchyLocations: sr.ContainerHierarchyLocations, ContainerHierarchyLabels: sr.ContainerHierarchyLabels,
		LeafNodeType: sr.LeafNodeType, LeafNodeLocation: sr.LeafNodeLocation, LeafNodeLabels: sr.LeafNodeLabels,
		LeafNodeText: sr.LeafNodeText, State: types.SpecStateSkipped, Failure: types.Failure{Message: claim.SkipMessage}})
	return b
}

// writeSpecReport registers, when logjam chaos names this spec process's
// report (runner.SpecReportEnv), the suite's last ReportAfterSuite: it
// writes the process's Ginkgo JSON report there, leaving out the specs
// another process claimed (each process walks every spec of its family, so
// these were most of each report; their claims hold them for the runner,
// internal/claim). Written whole or not at all (a rename).
func writeSpecReport() {
	path := os.Getenv(runner.SpecReportEnv)
	if path == "" {
		return
	}
	ginkgo.ReportAfterSuite("logjam: this spec process's report", func(r ginkgo.Report) {
		r.SpecReports = slices.DeleteFunc(slices.Clone(r.SpecReports), func(sr types.SpecReport) bool {
			return sr.State == types.SpecStateSkipped && sr.Failure.Message == claim.SkipMessage
		})
		b, err := json.Marshal([]types.Report{r})
		if err == nil {
			err = os.WriteFile(path+".part", b, 0o644)
		}
		if err == nil {
			err = os.Rename(path+".part", path)
		}
		if err != nil {
			ginkgo.Fail("writing the spec process's report: " + err.Error())
		}
	})
}
