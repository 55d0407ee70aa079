package capture_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestCapture(t *testing.T) { suitekit.RunSuite(t, "capture") }
