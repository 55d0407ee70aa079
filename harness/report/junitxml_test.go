package report

import (
	"bytes"
	"encoding/xml"
	"testing"

	"github.com/onsi/ginkgo/v2/reporters"

	"logjam/verdict"
)

// TestJUnitMatchesGinkgosSchema: junit.xml read into Ginkgo's own JUnit
// types and written back is the same document, so every element and
// attribute logjam writes is one Ginkgo's reporter writes, under the same
// name (a renamed or dropped tag in junitxml.go fails here).
func TestJUnitMatchesGinkgosSchema(t *testing.T) {
	run, cells := nightlySample(t.TempDir())
	cells[0].Failure = "lines out of order"
	cells[1].Real = map[string]verdict.Verdict{"3.11.7": verdict.OK}
	cells = append(cells, Cell{ID: "NR", Name: "NR not run", Family: "deadlock", Expected: "OK", Observed: "NOTRUN", Repeat: 1})
	ours, err := JUnit(run, Group(cells))
	if err != nil {
		t.Fatal(err)
	}
	var theirs reporters.JUnitTestSuites
	if err := xml.Unmarshal(ours, &theirs); err != nil {
		t.Fatal(err)
	}
	again, err := xml.MarshalIndent(theirs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	again = append([]byte(xml.Header), append(again, '\n')...)
	if !bytes.Equal(ours, again) {
		t.Fatalf("junit.xml differs from Ginkgo's schema:\nours:\n%s\nGinkgo's:\n%s", ours, again)
	}
	for _, want := range []string{"<failure ", "<skipped ", "<system-out>", "<property "} {
		if !bytes.Contains(ours, []byte(want)) {
			t.Errorf("the sample does not exercise %s", want)
		}
	}
}
