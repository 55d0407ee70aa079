package daemon_test

import (
	"testing"

	"logjam/suites/suitekit"
)

var _ = suitekit.BuildChild()

func TestDaemon(t *testing.T) { suitekit.RunSuite(t, "daemon") }
