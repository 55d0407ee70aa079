package report

import (
	"fmt"
	"regexp"
	"strings"
)

// Rerun is the command that reruns exactly one cell with the profile, seed
// and timeout scale it ran with (seed 0 and scale "" are left out), from
// any directory inside the module.
func Rerun(family, name, profile string, seed int64, timeoutScale string) string {
	env := "LOGJAM_PROFILE=" + profile
	if seed != 0 {
		env += fmt.Sprintf(" LOGJAM_SEED=%d", seed)
	}
	if timeoutScale != "" {
		env += " LOGJAM_TIMEOUT_SCALE=" + timeoutScale
	}
	focus := strings.ReplaceAll(regexp.QuoteMeta(name), "'", `'\''`)
	return fmt.Sprintf(`cd "$(go list -m -f '{{.Dir}}')" && %s ./logjam ginkgo --focus '%s' ./suites/%s`, env, focus, family)
}
