package suitekit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/onsi/ginkgo/v2"

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
		name := ginkgo.CurrentSpecReport().FullText()
		if !s.Has(name) {
			ginkgo.Skip(shard.SkipMessage + s.String())
		}
		if claims == nil {
			return
		}
		mine, err := claims.Take(name)
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
