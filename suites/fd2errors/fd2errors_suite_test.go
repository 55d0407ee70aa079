package fd2errors_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestFD2Errors(t *testing.T) { suitekit.RunSuite(t, "fd2errors") }
