package calibrate_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"

	"logjam/suites/suitekit"
)

// The real runs take minutes: a plain `go test ./...` skips them in one
// line; `--label-filter calibrate` (or LOGJAM_CALIBRATE=1) runs them.
func TestCalibrate(t *testing.T) {
	if !strings.Contains(ginkgo.GinkgoLabelFilter(), "calibrate") && os.Getenv("LOGJAM_CALIBRATE") == "" {
		why := "calibrate: real CPython runs are opt-in: go tool ginkgo --label-filter calibrate ./calibrate (or make calibrate)"
		fmt.Println(why)
		t.Skip(why)
	}
	var why string
	interps, why = selectInterps()
	if why = whyNot(interps, why); why != "" {
		fmt.Println(why)
		t.Skip(why)
	}
	planAhead(family + " suite")
	suitekit.RunSuite(t, family)
}
