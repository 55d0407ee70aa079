package random_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestRandom(t *testing.T) { suitekit.RunSuite(t, "random") }
