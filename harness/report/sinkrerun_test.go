package report

import (
	"strings"
	"testing"

	"logjam/scenario"
)

// A sink cell's rerun is the calibrate command that plays it again, built
// from its validated fields; a field that does not validate is never
// printed (the file name becomes SINK.cpp, the rest gives no command).
func TestASinkCellsRerunIsBuiltFromValidatedFields(t *testing.T) {
	c := Cell{Family: "sink", Cell: scenario.Cell{Scenario: "D1", Policy: "my_sink", Python: "3.11.7", Buffering: "unbuffered"}}
	if got, want := RerunOf(c), "./logjam calibrate -sink my_sink.cpp -rows D1 -py 3.11.7 -buffering unbuffered"; got != want {
		t.Fatalf("RerunOf = %q, want %q", got, want)
	}
	c.Cell.Buffering = ""
	if got := RerunOf(c); !strings.HasSuffix(got, "-buffering buffered") {
		t.Fatalf("the buffered buffering is not named: %q", got)
	}
	c.Cell.Policy = "x; rm -rf ~ #"
	if got := RerunOf(c); !strings.Contains(got, "-sink SINK.cpp ") || strings.Contains(got, "rm") {
		t.Fatalf("a sink name that does not validate reached the command: %q", got)
	}
	for _, bad := range []scenario.Cell{
		{Scenario: "D1; x", Policy: "s", Python: "3.11.7"},
		{Scenario: "D1", Policy: "s", Python: "3.11.7$(id)"},
		{Scenario: "D1", Policy: "s", Python: "3.11.7", Buffering: "raw"},
	} {
		if got := RerunOf(Cell{Family: "sink", Cell: bad}); got != "" {
			t.Errorf("%+v: a rerun from fields that do not validate: %q", bad, got)
		}
	}
}
