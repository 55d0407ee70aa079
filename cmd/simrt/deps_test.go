package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// linked is every package the child and logjam link, by import path,
// built as the child is (cgo off): one go list for this file's tests.
var linked = sync.OnceValues(func() (map[string]map[string]bool, error) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", child, "logjam/cmd/logjam")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, out)
	}
	m := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		set := map[string]bool{}
		for _, pkg := range f[1:] {
			set[pkg] = true
		}
		m[f[0]] = set
	}
	return m, nil
})

// child is this package, the child's.
const child = "logjam/cmd/simrt"

// deps is what pkg (child, or logjam/cmd/logjam) links.
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	m, err := linked()
	if err != nil {
		t.Fatal(err)
	}
	if m[pkg] == nil {
		t.Fatalf("go list named no %s", pkg)
	}
	return m[pkg]
}

// The child decodes schedules and never draws one: it must not link the
// generator's pgregory.net/rapid, whose package initialisation was about a
// fifth of a small run's CPU time (docs/RANDOM.md, "Shrinking").
func TestTheChildDoesNotLinkTheGenerator(t *testing.T) {
	d := deps(t, child)
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
	for _, pkg := range []string{child, "logjam/cmd/logjam"} {
		d := deps(t, pkg)
		for _, p := range []string{"net/http", "crypto/tls"} {
			if d[p] {
				t.Errorf("%s links %s", pkg, p)
			}
		}
	}
}
