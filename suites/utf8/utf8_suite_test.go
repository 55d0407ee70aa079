package utf8_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestUTF8(t *testing.T) { suitekit.RunSuite(t, "utf8") }
