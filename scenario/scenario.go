// Package scenario is the catalogue of scenarios and their contracts: what
// each requires of any policy (how it ends, how the parent arranges fd 2,
// what the ledger checks). The parent reads it without linking the
// interpreter; the programs that play each scenario's Python script live in
// scenario/programs, which only the child binary links. A contract never
// holds the verdict a matrix expects.
package scenario

import (
	"fmt"
	"sort"
	"strings"
)

// Ending is how a run must end for its lines to be judged.
type Ending string

// The endings.
const (
	// EndsDone: exit 0 after printing done; anything else is a hang, a crash
	// or a failure.
	EndsDone Ending = "done"
	// EndsAbort: the runtime aborts (SIGABRT) by design.
	EndsAbort Ending = "abort"
	// EndsKilled: the program blocks by design; the watchdog kills it at the
	// deadline and the lines are judged from what fd 2 shows.
	EndsKilled Ending = "killed"
)

// FD2 is how the parent arranges the child's fd 2.
type FD2 string

// The fd-2 arrangements a parent makes.
const (
	FD2File FD2 = "file" // a temporary file, read after the run
	// FD2ParentPipe: a real pipe of one page (F_SETPIPE_SZ 4096) whose
	// read end the parent drains with a pipes.Reader.
	FD2ParentPipe FD2 = "pipe"
	// FD2PTY: the slave of a new pty (raw output); the parent reads the
	// master with a pipes.Reader, as a terminal would.
	FD2PTY FD2 = "pty"
)

// ExitScenarioError is the child's exit status when the scenario refused to
// go on because a state it promised did not hold; the child also writes a
// telemetry.ScenarioError event with the reason. Such a run says nothing
// about the policy: the parent reports it as verdict.Error.
const ExitScenarioError = 4

// Contract is what a scenario requires of any policy: how it ends, how the
// parent arranges fd 2, and what the ledger checks.
type Contract struct {
	Ends Ending
	FD2  FD2
	// FD2Stalled: the parent's reader (FD2ParentPipe, FD2PTY) starts stalled,
	// until a MarkFD2Resume mark; a MarkFD2Pause mark only schedules the
	// resume. The stall is exact: no byte slips through before it.
	FD2Stalled bool
	// SigintIgnored: the parent starts the child with SIGINT ignored (as
	// `cmd &` in a non-interactive shell does).
	SigintIgnored bool
	// PipeSize is the capacity of FD2ParentPipe (0: one page).
	PipeSize int

	// What the ledger checks (harness/ledger).

	// Replaced: lines logged while sys.stderr was replaced must reach it.
	Replaced bool
	// Raises: the exception type the script's call must raise ("" = any).
	Raises string
	// Interrupts: Ctrl-Cs the run delivers; each must reach the caller as one
	// KeyboardInterrupt, its handler run once.
	Interrupts int
	// Callbacks: queued callbacks that must each run once.
	Callbacks int
}

// Info is one scenario as the parent knows it.
type Info struct {
	ID       string
	Slug     string
	Family   string
	Summary  string
	Contract Contract
	// Real is how the real column plays it, or why it cannot here.
	Real Real
}

var byID = func() map[string]*Info {
	m := map[string]*Info{}
	for i := range catalogue {
		in := &catalogue[i]
		if _, dup := m[in.ID]; dup {
			panic("scenario: duplicate id " + in.ID)
		}
		if in.Contract.FD2 == "" {
			in.Contract.FD2 = FD2File
		}
		if in.Contract.Ends == "" {
			in.Contract.Ends = EndsDone
		}
		m[in.ID] = in
	}
	return m
}()

// Lookup finds a scenario by id.
func Lookup(id string) (*Info, error) {
	if in, ok := byID[id]; ok {
		return in, nil
	}
	return nil, fmt.Errorf("unknown scenario %q (accepted: %s)", id, strings.Join(IDs(), ", "))
}

// IDs lists every scenario id, sorted.
func IDs() []string {
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// All lists every scenario, sorted by id.
func All() []*Info {
	var all []*Info
	for _, id := range IDs() {
		all = append(all, byID[id])
	}
	return all
}
