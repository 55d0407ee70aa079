package harness_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestHarness(t *testing.T) { suitekit.RunSuite(t, "harness") }
