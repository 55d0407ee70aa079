package search

import (
	"strings"
	"testing"

	"logjam/harness/cell"
	"logjam/harness/watchdog"
	"logjam/telemetry"
)

// A FLAKY HANG with no cycle names each live thread's locks and wait at the
// watchdog's dump: its replays ended OK, so that line is all that is left.
func TestAFlakyHangNamesItsThreadsAtTheDump(t *testing.T) {
	line := `{"ev":"dump","t":9000,"locks":{"threads":[` +
		`{"name":"MainThread","holds":["the GIL"],"waits":"room on fd 2 (a terminal)","held_by":["the parent"]},` +
		`{"name":"T1","holds":[],"ended":true},` +
		`{"name":"daemon-1","daemon":true,"holds":[]}]},"stacks":""}`
	ev, ok := telemetry.Parse([]byte(line))
	if !ok {
		t.Fatal("the dump line does not parse")
	}
	got := threadsAtDump(&cell.Outcome{Result: &watchdog.Result{Dump: &ev}})
	want := "MainThread holds the GIL waits for room on fd 2 (a terminal) (held by the parent); daemon-1 waits for nothing"
	if got != want {
		t.Fatalf("threads at the dump:\n got %q\nwant %q", got, want)
	}
	f := Flaky{Seed: 7, Failure: "logjam HANG (no cycle)", Got: []string{"OK"}, Threads: got}
	if !strings.Contains(f.String(), "; the failing play's threads at its dump: MainThread holds the GIL") {
		t.Fatalf("got %q", f)
	}
	if threadsAtDump(&cell.Outcome{Result: &watchdog.Result{}}) != "" || threadsAtDump(&cell.Outcome{}) != "" {
		t.Fatal("no dump: want no threads")
	}
}
