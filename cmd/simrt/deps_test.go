package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The child decodes schedules and never draws one: it must not link the
// generator's pgregory.net/rapid, whose package initialisation was about a
// fifth of a small run's CPU time (docs/RANDOM.md, "Shrinking").
func TestTheChildDoesNotLinkTheGenerator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "pgregory.net/rapid" || pkg == "logjam/scenario/schedule/gen" {
			t.Errorf("cmd/simrt links %s", pkg)
		}
	}
}
