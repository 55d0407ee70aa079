package main

import (
	"strings"
	"testing"
	"time"

	"logjam/harness/report"
)

// A repeat whose verdict matched but whose spec failed another check is a
// row of the table, with the check's message; so is a spec that failed
// outside any cell.
func TestAFailedCheckIsARowOfTheTable(t *testing.T) {
	ok := report.Cell{Name: "F4 x", Family: "fatal", Expected: "OK", Observed: "OK", Repeat: 1}
	failed := ok
	failed.Repeat, failed.Failure = 2, "lines out of order"
	spec := report.SpecRow("random", "R seed=1", "R seed=1 [x]", "the replay gave another verdict")
	spec.Repeat = 1
	rows, repeats := differing([]cell{ok, failed, spec})
	if repeats != 2 || len(rows) != 2 {
		t.Fatalf("%d rows over %d repeats, want 2 over 2: %+v", len(rows), repeats, rows)
	}
	var b strings.Builder
	printTable(&b, rows, repeats, 2, 0, time.Second)
	for _, want := range []string{"OK (check failed) x1", "failed check: lines out of order", "FAIL x1", "2 cell(s) whose outcome ever differed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "missing") {
		t.Errorf("a failed spec's row is not missing from the repeats it passed in:\n%s", b.String())
	}
}
