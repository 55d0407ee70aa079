package signals_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestSignals(t *testing.T) { suitekit.RunSuite(t, "signals") }
