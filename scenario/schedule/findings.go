package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"logjam/scenario"
)

// Findings are the schedules random search found and shrank that the
// matrix keeps as rows RF1-RF4 (docs/CONTRACT.md, "Findings of random
// search"), written once for policy logjam on Linux, Python 3.12:
// suites/random plays each under every policy, and the real calibration on
// every interpreter (the policy, version and buffering put in), as Real
// says.
var Findings = map[string]Finding{
	"RF1": {Slug: "destructor-logs-outside-call-stderr-captured",
		Schedule: `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":1,"size":80,"level":"I"}]}],"outside":8}}`,
		Real:     scenario.Real{FD2: scenario.FD2File, Deadline: 5 * time.Second, Note: "sys.stderr a capture; one call logs a line, then 8 lines outside any call (a destructor, GIL held)"}},
	"RF2": {Slug: "failing-stderr-fallback-on-forwarder-pipe",
		Schedule: `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":4096,"chunk":1024},"stderr":{"kind":"oserror","k":1},"threads":[{"calls":[{"backend":0,"lines":64,"size":127,"level":"I"}]}]}}`,
		Real:     scenario.Real{FD2: scenario.FD2File, Deadline: 5 * time.Second, Note: "wurlitzer's capture (a 4096-byte pipe, 1024-byte reads, a forwarder that needs the GIL); sys.stderr raises OSError on every write; one call logs 64 lines"}},
	"RF3": {Slug: "flush-blocked-part-way-another-thread-writes",
		Schedule: `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":8192,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":1,"size":130,"level":"E","cjk":true},{"backend":1,"lines":117,"size":80,"level":"E","cjk":true,"wait_for":4}]},{"calls":null},{"calls":[{"backend":1,"lines":1,"size":127,"level":"E","wait_for":1}]},{"calls":null}]}}`,
		Real: scenario.Real{FD2: scenario.FD2File, Deadline: 5 * time.Second, LeftOut: []scenario.LeftOut{{Policy: "pystderr", Buffering: "",
			Why: "the real outcome is both HANG and REORDERED: pybind11's pythonbuf writes and then flushes, two holds of the BufferedWriter's lock, " +
				"a semaphore that hands nothing over, so whether T2 (woken at the end of MainThread's write) or MainThread's flush takes it next " +
				"is CPython's race, inside pythonbuf where the harness has no switch point (HANG 9 of 10 on 3.11.7): docs/FINDINGS.md"},
			{Policy: "pystderr", Buffering: "unbuffered",
				Why: "the real outcome is both HANG and REORDERED here too: pythonbuf's write(2) lets the GIL go inside pybind11, where the harness " +
					"has no switch point, and T2 may take it there and flush pythonbuf's one shared buffer, MainThread's line still in it " +
					"(REORDERED in the fresh-clone CI at 00f854f and again within 40 plays on a quiet machine): docs/FINDINGS.md"}},
			Note: "wurlitzer's capture (8192-byte pipe); each thread's calls run natively back to back (no bytecode, so no switch interval, between them); T2 asks for the GIL once MainThread's calls begin and gets it at MainThread's first release of it (a forced switch: T2 is seen asleep in the GIL's wait first), takes the second backend's lock and logs once MainThread waits (asleep in a wait that does not end by itself; for the GIL, after asking for a forced switch)"}},
	"RF4": {Slug: "daemon-flushes-process-wide-lines-at-exit",
		Schedule: `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"outside":128,"daemons":1}}`,
		Real:     scenario.Real{FD2: scenario.FD2File, Deadline: 5 * time.Second, Note: "wurlitzer's capture (4096-byte pipe); 128 lines outside any call (GIL held), the capture closed, then a daemon thread loops through calls while the interpreter exits (as T1)"}},
}

// A Finding is one of those rows: its slug (its cells' names, CellName),
// its schedule, and how the real column plays it.
type Finding struct {
	Slug     string
	Schedule string
	Real     scenario.Real
}

// CellName is the name of row id's cell under policy, as suites/random
// names it: "RF1 <slug> [policy=P]".
func CellName(id, policy string) string {
	return fmt.Sprintf("%s %s [policy=%s]", id, Findings[id].Slug, policy)
}

// ParseCellName is CellName's inverse: the row and the policy a found
// row's cell name names; ok is false for any other name.
func ParseCellName(name string) (id, policy string, ok bool) {
	id, rest, _ := strings.Cut(name, " ")
	f, found := Findings[id]
	if !found {
		return "", "", false
	}
	policy, ok = strings.CutPrefix(rest, f.Slug+" [policy=")
	policy, ok2 := strings.CutSuffix(policy, "]")
	if !ok || !ok2 || !slices.Contains(SinkPolicies, policy) {
		return "", "", false
	}
	return id, policy, true
}
