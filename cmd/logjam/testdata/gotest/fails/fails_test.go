// Package fails is a package whose one test fails (gotest_test.go).
package fails

import "testing"

func TestFails(t *testing.T) { t.Fatal("planted failure") }
