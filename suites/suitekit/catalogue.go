package suitekit

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"logjam/scenario"
)

// probed are the scenarios every suite plays before its cells (the
// failpoint probe), not rows of the matrix.
var probed = []string{"H0"}

// checkCatalogue registers the check that a family's suite and the scenario
// catalogue agree, once the specs have been walked (also under --focus, a
// shard or a dry run: specs left out are still reported): every scenario
// catalogued for the family has a spec named from its ID, and every spec
// named as a cell names a scenario of this family. (An Entry built here
// names a catalogued scenario, or the suite stops at its construction.)
func checkCatalogue(fam string) {
	var want []string
	for _, in := range scenario.All() {
		if in.Family == fam && !slices.Contains(probed, in.ID) {
			want = append(want, in.ID)
		}
	}
	if len(want) == 0 {
		return // not a family of the catalogue (calibrate replays the others' rows)
	}
	ginkgo.ReportAfterSuite("the catalogue's "+fam+" scenarios and this suite's cells agree, each declared in the suite's files", func(r ginkgo.Report) {
		msg := catalogueMismatch(fam, want, r.SpecReports)
		if where := elsewhere(fam, r.SpecReports); where != "" {
			msg = strings.TrimPrefix(msg+"; "+where, "; ")
		}
		if msg != "" {
			ginkgo.Fail(msg)
		}
	})
}

// catalogueMismatch says which catalogued scenarios of fam no spec plays
// and which specs name a scenario of another family ("" when they agree).
func catalogueMismatch(fam string, want []string, specs types.SpecReports) string {
	named := map[string]bool{}
	stray := map[string]string{}
	for _, sr := range specs {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		id, _, _ := strings.Cut(sr.LeafNodeText, " ")
		named[id] = true
		if c, _, err := scenario.Parse(sr.LeafNodeText); err == nil {
			if in, _ := scenario.Lookup(c.Scenario); in.Family != fam {
				stray[c.Scenario] = in.Family
			}
		}
	}
	var missing []string
	for _, id := range want {
		if !named[id] {
			missing = append(missing, id)
		}
	}
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, fmt.Sprintf("catalogued for %s but no spec plays them: %s (scenario/catalogue.go)", fam, strings.Join(missing, ", ")))
	}
	for _, id := range slices.Sorted(maps.Keys(stray)) {
		msg = append(msg, fmt.Sprintf("the %s suite plays %s, a scenario of %s", fam, id, stray[id]))
	}
	return strings.Join(msg, "; ")
}

// elsewhere names the specs of fam whose location is not a line of the
// suite's own files (suites/<fam>/*_test.go): a cell built by a helper
// that does not pass its caller's line on, so that Ginkgo would show the
// helper's line above a failure instead of the Entry's ("" when none).
func elsewhere(fam string, specs types.SpecReports) string {
	var out []string
	for _, sr := range specs {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		f := sr.LeafNodeLocation.FileName
		if filepath.Base(filepath.Dir(f)) != fam || !strings.HasSuffix(f, "_test.go") {
			out = append(out, fmt.Sprintf("%s is declared at %s, not in the %s suite's files", sr.LeafNodeText, sr.LeafNodeLocation, fam))
		}
	}
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("and %d more", len(out)-3))
	}
	return strings.Join(out, "; ")
}
