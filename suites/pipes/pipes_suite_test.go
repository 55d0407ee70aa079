package pipes_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestPipes(t *testing.T) { suitekit.RunSuite(t, "pipes") }
