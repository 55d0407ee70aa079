package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// deps is `go list -deps` of pkgs, built as the child is (cgo off).
func deps(t *testing.T, pkgs ...string) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	m := map[string]bool{}
	for _, pkg := range strings.Fields(string(out)) {
		m[pkg] = true
	}
	return m
}

// The child decodes schedules and never draws one: it must not link the
// generator's pgregory.net/rapid, whose package initialisation was about a
// fifth of a small run's CPU time (docs/RANDOM.md, "Shrinking").
func TestTheChildDoesNotLinkTheGenerator(t *testing.T) {
	d := deps(t, ".")
	for _, pkg := range []string{"pgregory.net/rapid", "logjam/scenario/schedule/gen"} {
		if d[pkg] {
			t.Errorf("cmd/simrt links %s", pkg)
		}
	}
}

// Neither the child nor logjam serves or fetches anything over HTTP: the
// HTTP stack came only with failpoint's control server, which
// third_party/failpoint leaves out; with it a child's start took about a
// quarter more CPU (docs/RANDOM.md, "What a search's time goes to").
func TestTheChildLinksNoHTTPStack(t *testing.T) {
	for _, pkg := range []string{".", "logjam/cmd/logjam"} {
		d := deps(t, pkg)
		for _, p := range []string{"net/http", "crypto/tls"} {
			if d[p] {
				t.Errorf("%s links %s", pkg, p)
			}
		}
	}
}
