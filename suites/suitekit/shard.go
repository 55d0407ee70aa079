package suitekit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/onsi/ginkgo/v2"

	"logjam/internal/shard"
)

// skipOtherShards skips, before anything runs, each spec that belongs to
// another shard than LOGJAM_SHARD's (logjam chaos -shard K/N). A malformed
// value ends the process with one line and status 2.
func skipOtherShards() {
	s, err := shard.FromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "logjam: %v\n", err)
		os.Exit(2)
	}
	if s.All() {
		return
	}
	ginkgo.BeforeEach(func() {
		if !s.Has(ginkgo.CurrentSpecReport().FullText()) {
			ginkgo.Skip(shard.SkipMessage + s.String())
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
