package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// testLines turns `go test -json` back into go test's own lines (a line
// per package; a failing package's failing tests' output before it), with
// one change: a package's "ok" line names the tests that skipped, and why
// the first did (the calibrate suite skips without its label; a
// measurement skips without its variable), where go test says nothing.
// It is an io.Writer for the go command's stdout; close flushes what is
// left. A line that is not test2json's JSON is passed on as it is.
type testLines struct {
	mu   sync.Mutex
	out  io.Writer
	part []byte
	pkgs map[string]*testPackage
}

// testPackage is what one package's events have said so far.
type testPackage struct {
	summary string              // go test's "ok"/"FAIL"/"?" line
	other   []string            // package-level output other than the summary
	tests   map[string]string   // top-level test -> its last action
	output  map[string][]string // top-level test -> its output (subtests' too)
	order   []string            // top-level tests in the order they ran
}

// testEvent is test2json's event (go doc cmd/test2json), with the build
// events go test -json adds (ImportPath, build-output).
type testEvent struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

func newTestLines(out io.Writer) *testLines {
	return &testLines{out: out, pkgs: map[string]*testPackage{}}
}

func (l *testLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, b...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		l.line(l.part[:i+1])
		l.part = l.part[i+1:]
	}
}

// close passes on a last line without its newline.
func (l *testLines) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		l.line(l.part)
		l.part = nil
	}
}

func (l *testLines) line(raw []byte) {
	var e testEvent
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &e) != nil || e.Action == "" {
		l.out.Write(raw)
		return
	}
	if e.Action == "build-output" {
		io.WriteString(l.out, e.Output)
		return
	}
	if e.Package == "" {
		return // build-fail: its package's own fail event follows
	}
	p := l.pkgs[e.Package]
	if p == nil {
		p = &testPackage{tests: map[string]string{}, output: map[string][]string{}}
		l.pkgs[e.Package] = p
	}
	top, _, _ := strings.Cut(e.Test, "/")
	switch {
	case e.Action == "output" && e.Test == "":
		if isSummary(e.Output) {
			p.summary = e.Output
		} else if o := e.Output; o != "PASS\n" && o != "FAIL\n" && !strings.HasPrefix(o, "=== ") {
			p.other = append(p.other, o)
		}
	case e.Action == "output":
		if !strings.HasPrefix(e.Output, "=== ") {
			p.output[top] = append(p.output[top], e.Output)
		}
	case e.Test != "" && e.Test == top && slices.Contains([]string{"run", "pass", "fail", "skip"}, e.Action):
		if _, seen := p.tests[top]; !seen {
			p.order = append(p.order, top)
		}
		p.tests[top] = e.Action
	case e.Test == "" && slices.Contains([]string{"pass", "fail", "skip"}, e.Action):
		l.done(e.Package, p, e.Action)
	}
}

// summaryLine is go test's line for a package: ok, FAIL or ? first.
var summaryLine = regexp.MustCompile(`^(ok  |FAIL|\?   )\t`)

func isSummary(s string) bool { return summaryLine.MatchString(s) }

// done prints a package as go test would, its skip said.
func (l *testLines) done(name string, p *testPackage, action string) {
	delete(l.pkgs, name)
	if action == "fail" {
		for _, t := range p.order {
			if p.tests[t] == "fail" {
				io.WriteString(l.out, strings.Join(p.output[t], ""))
			}
		}
		io.WriteString(l.out, strings.Join(p.other, ""))
		io.WriteString(l.out, "FAIL\n")
	}
	summary := p.summary
	if summary == "" {
		summary = fmt.Sprintf("%s\t%s\n", map[string]string{"pass": "ok  ", "fail": "FAIL", "skip": "?   "}[action], name)
	}
	if why := skipped(p); action == "pass" && why != "" {
		summary = strings.TrimSuffix(summary, "\n") + " (skipped: " + why + ")\n"
	}
	io.WriteString(l.out, summary)
}

// skipped names the package's top-level tests that skipped, the first with
// its reason (t.Skip's message), or "" when none did: "TestCalibrate:
// real CPython runs are opt-in ...", "3 tests, TestA: ...".
func skipped(p *testPackage) string {
	var names []string
	why := ""
	for _, t := range p.order {
		if p.tests[t] == "skip" {
			names = append(names, t)
			if why == "" {
				why = skipMessage(p.output[t])
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	s := names[0]
	if len(names) > 1 {
		s = fmt.Sprintf("%d tests, %s", len(names), names[0])
	}
	if why != "" {
		s += ": " + why
	}
	return s
}

// skipMessage is t.Skip's message in a skipped test's output: the last
// line with a file:line before "--- SKIP", without its file:line.
var fileLine = regexp.MustCompile(`^\s*[A-Za-z0-9_.]+\.go:[0-9]+: `)

func skipMessage(out []string) string {
	why := ""
	for _, o := range out {
		if strings.HasPrefix(strings.TrimSpace(o), "--- SKIP") {
			break
		}
		if fileLine.MatchString(o) {
			why = strings.TrimSpace(fileLine.ReplaceAllString(o, ""))
		}
	}
	return why
}
