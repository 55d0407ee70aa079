package calibrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"

	"logjam/calibrate"
)

// The real column: one Entry per (row, policy or variant, interpreter,
// profile). Each prints the real verdict beside SCENARIOS.md's expected one
// and marks agree / disagree; a disagreement is a finding, not a failure
// (the suite does not yet assert that real == simulated). A run that could
// not be made at all (the extension did not build, the harness erred)
// fails.
//
// Knobs: LOGJAM_CALIBRATE_PY=3.12,3.13 keeps those versions;
// LOGJAM_CALIBRATE_PROFILES=buffered (or unbuffered) keeps one profile;
// LOGJAM_CALIBRATE_ROWS=D1,I2 keeps those rows; LOGJAM_CALIBRATE_REPEAT=20
// runs each cell 20 times and reports the verdict counts (stress); LOGJAM_TIMEOUT_SCALE scales
// every deadline; LOGJAM_CALIBRATE_REPORT names the JSON report
// (reports/calibration.json under the module root by default).

var (
	interps = selectInterps(calibrate.Discover())
	skipWhy = whyNot(interps)

	mu      sync.Mutex
	results []result
	builds  = map[string]string{}
	buildEr = map[string]error{}
)

type result struct {
	Row, Policy, Variant, Profile, Python string
	Real, Expected, Corrected, Mark       string
	Why                                   string `json:",omitempty"`
	Runs                                  string `json:",omitempty"` // verdict counts over LOGJAM_CALIBRATE_REPEAT runs
	Reason                                string
	Ms                                    int64
}

func selectInterps(all []calibrate.Interpreter) []calibrate.Interpreter {
	want := os.Getenv("LOGJAM_CALIBRATE_PY")
	if want == "" {
		return all
	}
	var out []calibrate.Interpreter
	for _, in := range all {
		for _, w := range strings.Split(want, ",") {
			if w == in.Short() || w == in.Version {
				out = append(out, in)
			}
		}
	}
	return out
}

func whyNot(ins []calibrate.Interpreter) string {
	if len(ins) == 0 {
		return "calibrate: skipped: no python3 (3.10-3.13) found on PATH or under ~/.pyenv/versions"
	}
	if _, err := calibrate.Compiler(); err != nil {
		return "calibrate: skipped: no C++ compiler (g++ or $CXX) to build the extension"
	}
	for _, in := range ins {
		if in.Missing == "" {
			return ""
		}
	}
	return "calibrate: skipped: no interpreter has its headers (Python.h): install python3-dev"
}

// skip prints why in one line (Ginkgo hides a BeforeSuite skip's reason
// unless verbose), then skips the suite.
func skip(why string) {
	fmt.Println(why)
	ginkgo.Skip(why)
}

func keep(env, v string) bool {
	w := os.Getenv(env)
	if w == "" {
		return true
	}
	for _, x := range strings.Split(w, ",") {
		if x == v {
			return true
		}
	}
	return false
}

func build(in calibrate.Interpreter) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if d, ok := builds[in.Version]; ok {
		return d, buildEr[in.Version]
	}
	d, err := calibrate.Build(in)
	builds[in.Version], buildEr[in.Version] = d, err
	return d, err
}

func entries() []ginkgo.TableEntry {
	var es []ginkgo.TableEntry
	for _, in := range interps {
		for _, row := range calibrate.Rows {
			if !keep("LOGJAM_CALIBRATE_ROWS", row.ID) {
				continue
			}
			profiles := []string{calibrate.Buffered, calibrate.Unbuffered}
			if row.Variants != nil || row.ID == "T1" {
				profiles = profiles[:1] // the sink plays no part / exit-time only
			}
			for _, prof := range profiles {
				if !keep("LOGJAM_CALIBRATE_PROFILES", prof) {
					continue
				}
				if row.Variants != nil {
					for _, v := range row.Variants {
						es = append(es, ginkgo.Entry(name(row.ID, "fd2", v, in, prof), in, row, "fd2", v, prof, ginkgo.Label("calibrate", "py"+in.Short())))
					}
					continue
				}
				for _, p := range calibrate.Policies {
					es = append(es, ginkgo.Entry(name(row.ID, p, "", in, prof), in, row, p, "", prof, ginkgo.Label("calibrate", "py"+in.Short())))
				}
			}
		}
	}
	return es
}

func name(row, policy, variant string, in calibrate.Interpreter, prof string) string {
	what := "policy=" + policy
	if variant != "" {
		what = "variant=" + variant
	}
	return fmt.Sprintf("%s real [%s py=%s stderr=%s]", row, what, in.Version, prof)
}

// The real runs take minutes: a plain `go test ./...` skips them with one
// line; `--label-filter calibrate` (or LOGJAM_CALIBRATE=1) runs them.
var _ = ginkgo.BeforeSuite(func() {
	if !strings.Contains(ginkgo.GinkgoLabelFilter(), "calibrate") && os.Getenv("LOGJAM_CALIBRATE") == "" {
		skip("calibrate: real CPython runs are opt-in: go tool ginkgo --label-filter calibrate ./calibrate (or LOGJAM_CALIBRATE=1)")
	}
	if skipWhy != "" {
		skip(skipWhy)
	}
})

var _ = ginkgo.Describe("calibrate", ginkgo.Label("calibrate"), func() {
	ginkgo.DescribeTable("real CPython against the expected matrix",
		func(in calibrate.Interpreter, row calibrate.Row, policy, variant, prof string) {
			if in.Missing != "" {
				ginkgo.Skip("python " + in.Version + ": " + in.Missing)
			}
			dir, err := build(in)
			if err != nil {
				ginkgo.Fail(err.Error())
			}
			var out *calibrate.Outcome
			counts := map[string]int{}
			for i := 0; i < repeat(); i++ {
				o, err := calibrate.Run(context.Background(), in, dir, row, policy, variant, prof, calibrate.Options{Scale: scale()})
				if err != nil {
					ginkgo.Fail(err.Error())
				}
				counts[o.Observed]++
				if out == nil || counts[o.Observed] > counts[out.Observed] {
					out = o
				}
				if dir := os.Getenv("LOGJAM_CALIBRATE_EVIDENCE"); dir != "" && i == 0 {
					_ = o.WriteEvidence(filepath.Join(dir, strings.NewReplacer(" ", "_", "[", "", "]", "", "=", "-").Replace(name(row.ID, policy, variant, in, prof))))
				}
			}
			exp := calibrate.ExpectedVerdict(row.ID, policy, variant)
			r := result{Row: row.ID, Policy: policy, Variant: variant, Profile: prof, Python: in.Version,
				Real: out.Observed, Expected: exp, Reason: out.Reason, Ms: out.Ms}
			if len(counts) > 1 || repeat() > 1 {
				var parts []string
				for v, n := range counts {
					parts = append(parts, fmt.Sprintf("%s %d/%d", v, n, repeat()))
				}
				sort.Strings(parts)
				r.Runs = strings.Join(parts, ", ")
			}
			if row.Variants != nil {
				r.Policy = ""
			} else if c, why, ok := calibrate.Correction(row.ID, policy, prof, in.Version); ok {
				r.Corrected, r.Why = c, why
			}
			switch {
			case r.Real == r.Expected:
				r.Mark = "agree"
			case r.Corrected != "" && r.Real == r.Corrected:
				r.Mark = "agree-correction"
			default:
				r.Mark = "DISAGREE"
			}
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
			ginkgo.GinkgoWriter.Printf("real %s | expected %s | correction %q | %s | %s\n", r.Real, r.Expected, r.Corrected, r.Mark, r.Reason)
			if r.Mark == "DISAGREE" {
				ginkgo.AddReportEntry("disagreement", fmt.Sprintf("%s %s%s py%s %s: real %s, expected %s (%s)", r.Row, r.Policy, r.Variant, r.Python, r.Profile, r.Real, r.Expected, r.Reason))
			}
		},
		entries())

})

var _ = ginkgo.SynchronizedAfterSuite(func() {
	mu.Lock()
	defer mu.Unlock()
	if len(results) == 0 {
		return
	}
	sort.Slice(results, func(i, j int) bool {
		a, b := results[i], results[j]
		if a.Row != b.Row {
			return a.Row < b.Row
		}
		if a.Profile != b.Profile {
			return a.Profile < b.Profile
		}
		if a.Policy+a.Variant != b.Policy+b.Variant {
			return a.Policy+a.Variant < b.Policy+b.Variant
		}
		return a.Python < b.Python
	})
	path := os.Getenv("LOGJAM_CALIBRATE_REPORT")
	if path == "" {
		path = filepath.Join(moduleRoot(), "reports", "calibration.json")
	}
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	b, _ := json.MarshalIndent(results, "", "  ")
	_ = os.WriteFile(path, b, 0o644)
	agree, dis := 0, 0
	for _, r := range results {
		if r.Mark == "DISAGREE" {
			dis++
		} else {
			agree++
		}
	}
	fmt.Printf("\ncalibrate: %d real cells, %d agree (with SCENARIOS.md or its corrections), %d disagree; report %s\n", len(results), agree, dis, path)
	for _, r := range results {
		fmt.Printf("  %-3s %-9s%-9s py%-7s %-10s real %-12s expected %-12s %-16s %s\n", r.Row, r.Policy, r.Variant, r.Python, r.Profile, r.Real, r.Expected, r.Mark, r.Runs)
	}
}, func() {})

func moduleRoot() string {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "."
	}
	return filepath.Dir(strings.TrimSpace(string(b)))
}

// repeat is LOGJAM_CALIBRATE_REPEAT (1 when unset): each cell runs that
// many times; the most frequent verdict is reported with the counts.
func repeat() int {
	var n int
	if _, err := fmt.Sscanf(os.Getenv("LOGJAM_CALIBRATE_REPEAT"), "%d", &n); err != nil || n < 1 {
		return 1
	}
	return n
}

func scale() float64 {
	var s float64
	if _, err := fmt.Sscanf(os.Getenv("LOGJAM_TIMEOUT_SCALE"), "%g", &s); err != nil || s <= 0 {
		return 1
	}
	return s
}
