package calibrate

import (
	"time"

	"logjam/sim/scenario"
)

// FD2 kinds the parent arranges for a real run.
const (
	FD2File = "file" // a temporary file
	FD2Pipe = "pipe" // a one-page pipe the parent drains (pipes.Reader)
	FD2PTY  = "pty"  // a new pty's slave; the parent reads the master
)

// Row is one real reproduction: the scenario's contract (from the
// simulated scenario package, so both columns are judged alike) and how the
// parent arranges the real child.
type Row struct {
	ID       string
	FD2      string
	Stalled  bool          // the parent's reader starts stalled
	Ignored  bool          // SIGINT ignored at start
	Deadline time.Duration // before the watchdog's scale
	Variants []string      // lazy init
	// Note says how the real run differs from the simulated one, if at all.
	Note string
}

// Rows are the rows the real column reproduces, in the matrix's order.
var Rows = []Row{
	{ID: "D1", FD2: FD2Pipe, Stalled: true, Deadline: 4 * time.Second,
		Note: "fd 2 is a full one-page pipe the parent resumes once A blocks in write(2) and, if A's write released the GIL, B has blocked on L (or got it): the GIL window is made deterministic; with a file it exists but B winning it is a race"},
	{ID: "D2", FD2: FD2File, Deadline: 4 * time.Second,
		Note: "the slow stream's write releases the GIL until B has blocked on L or got it (a polled condition, not a fixed sleep)"},
	{ID: "P1", FD2: FD2File, Deadline: 4 * time.Second},
	{ID: "P2", FD2: FD2File, Deadline: 4 * time.Second},
	{ID: "P3", FD2: FD2PTY, Stalled: true},
	{ID: "P5", FD2: FD2Pipe, Stalled: true, Note: "paced: one line per 25 ms of delegate work with the GIL held, as the simulated row"},
	{ID: "P6", FD2: FD2File, Deadline: 4 * time.Second},
	{ID: "C1", FD2: FD2File},
	{ID: "C2", FD2: FD2File},
	{ID: "C3", FD2: FD2File},
	{ID: "I1", FD2: FD2File},
	{ID: "I2", FD2: FD2Pipe, Stalled: true},
	{ID: "I3", FD2: FD2File},
	{ID: "I4", FD2: FD2File},
	{ID: "I5", FD2: FD2File, Ignored: true},
	{ID: "I6", FD2: FD2File},
	{ID: "F1", FD2: FD2File},
	{ID: "F2", FD2: FD2File, Deadline: 2 * time.Second},
	{ID: "F3", FD2: FD2File},
	{ID: "F4", FD2: FD2Pipe, Note: "paced: one line per 25 ms of delegate work with the GIL held, as the simulated row"},
	{ID: "U1", FD2: FD2File},
	{ID: "U2", FD2: FD2File},
	{ID: "U3", FD2: FD2File},
	{ID: "T1", FD2: FD2File, Note: "daemon threads loop through calls while the interpreter exits (this interpreter is before 3.13.8)"},
	{ID: "L1", FD2: FD2File, Deadline: 3 * time.Second, Variants: LazyVariants},
	{ID: "L2", FD2: FD2File, Deadline: 3 * time.Second, Variants: LazyVariants},
	{ID: "L3", FD2: FD2File, Deadline: 3 * time.Second, Variants: LazyVariants},
}

// LazyVariants are the torch.cuda._lazy_call variants.
var LazyVariants = []string{"old", "initfast", "norace", "fixed"}

// NotReproduced names the matrix's rows the real column leaves out, and why.
var NotReproduced = map[string]string{
	"P4": "macOS only: poll's answer for small pipes is XNU's; this is Linux",
	"T2": "needs Python 3.13.8 or later (daemon threads hang instead of unwinding); none here",
	"T3": "needs Python 3.14; none here",
	"T4": "macOS only",
	"T5": "needs Python 3.14; none here",
	"T6": "macOS only",
}

// Contract is the simulated scenario's contract for the row.
func (r Row) Contract() (scenario.Contract, error) {
	p, err := scenario.Lookup(r.ID)
	if err != nil {
		return scenario.Contract{}, err
	}
	return p.Contract, nil
}
