package deadlock_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestDeadlock(t *testing.T) { suitekit.RunSuite(t, "deadlock") }
