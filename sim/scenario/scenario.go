// Package scenario holds the scenario programs: small Go functions that play
// a scenario's Python script against the simulated runtime, each with the
// contract the verdict is judged by. A program never knows the verdict a
// matrix expects of it.
package scenario

import (
	"fmt"
	"logjam/telemetry"
	"sort"
	"strings"

	"logjam/failpoints"
	"logjam/ledger"
	"logjam/sim"
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

// MarkSIGINT is the telemetry mark on which the parent sends the child one
// real SIGINT (kill(2) on the pid of the child's "start" event).
const MarkSIGINT = telemetry.MarkSIGINT

// MarkFD2Pause is the telemetry mark ("mark", name MarkFD2Pause, "ms") on
// which the parent's reader of fd 2 (FD2ParentPipe, FD2PTY) stops reading
// for ms milliseconds, then reads on.
const MarkFD2Pause = telemetry.MarkFD2Pause

// Contract is what a scenario requires of any policy: how it ends, how the
// parent arranges fd 2, and what the ledger checks.
type Contract struct {
	Ends Ending
	FD2  FD2
	// FD2Stalled: the parent's reader (FD2ParentPipe, FD2PTY) starts stalled;
	// the child's first MarkFD2Pause mark then only schedules the resume.
	// The stall is exact: no byte slips through before it.
	FD2Stalled bool
	// SigintIgnored: the parent starts the child with SIGINT ignored (as
	// `cmd &` in a non-interactive shell does).
	SigintIgnored bool
	ledger.Contract
}

// Program is one scenario.
type Program struct {
	ID       string
	Slug     string
	Family   string
	Summary  string
	Contract Contract
	// Run plays the script. It returns the exception that escapes to the top.
	Run func(e *Env) *sim.PyErr
	// Raw, for the watchdog's purpose-built children, replaces the runtime.
	Raw func() int
	// Check validates the -variant and -backend flags of programs that
	// take them (nil: the program takes neither).
	Check func(variant, backend string) error
}

// Env is what a program runs against.
type Env struct {
	RT   *sim.Runtime
	Main *sim.Thread
	FP   *failpoints.Scope
	// Variant and Backend are the lazy-init flags (L scenarios).
	Variant, Backend string
}

var registry = map[string]*Program{}

func register(p *Program) {
	if _, dup := registry[p.ID]; dup {
		panic("scenario: duplicate id " + p.ID)
	}
	if p.Contract.FD2 == "" {
		p.Contract.FD2 = FD2File
	}
	if p.Contract.Ends == "" {
		p.Contract.Ends = EndsDone
	}
	registry[p.ID] = p
}

// Lookup finds a program by id.
func Lookup(id string) (*Program, error) {
	if p, ok := registry[id]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown scenario %q (accepted: %s)", id, strings.Join(IDs(), ", "))
}

// IDs lists every scenario id, sorted.
func IDs() []string {
	ids := make([]string, 0, len(registry))
	for id := range registry {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// All lists every program, sorted by id.
func All() []*Program {
	var ps []*Program
	for _, id := range IDs() {
		ps = append(ps, registry[id])
	}
	return ps
}

// call runs a binding call and prints the exception the script catches, as
// `except Exception as e: print(type(e).__name__, e)` would.
func (e *Env) call(t *sim.Thread, name string, body func() *sim.NativeError) *sim.PyErr {
	err := e.RT.Call(t, name, body)
	if err != nil {
		e.RT.In.Print(fmt.Sprintf("%s: caught %s: %s", t.Name, err.Type, err.Msg))
	}
	return err
}
