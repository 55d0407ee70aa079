package fatal_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestFatal(t *testing.T) { suitekit.RunSuite(t, "fatal") }
