package lazyinit_test

import (
	"testing"

	"logjam/suites/suitekit"
)

func TestLazyinit(t *testing.T) { suitekit.RunSuite(t, "lazyinit") }

var _ = suitekit.BuildChild()
