// Package passes is a package whose one test passes (gotest_test.go).
package passes

import (
	"os"
	"testing"
	"time"
)

// TestPasses is silent for LOGJAM_GOTEST_QUIET (a duration) first, so
// that the caller can watch logjam test speak during a silence.
func TestPasses(t *testing.T) {
	if d, err := time.ParseDuration(os.Getenv("LOGJAM_GOTEST_QUIET")); err == nil {
		time.Sleep(d)
	}
}
