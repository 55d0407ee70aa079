package calibrate

import (
	"time"

	"logjam/internal/axes"
	"logjam/scenario"
)

// FD2 kinds the parent arranges for a real run (cell.ArrangeFD2's).
const (
	FD2File = scenario.FD2File       // a temporary file
	FD2Pipe = scenario.FD2ParentPipe // a one-page pipe the parent drains
	FD2PTY  = scenario.FD2PTY        // a new pty's slave; the parent reads the master
)

// Row is one real reproduction: the scenario's contract (from the
// simulated scenario package, so both columns are judged alike) and how the
// parent arranges the real child.
type Row struct {
	ID       string
	FD2      scenario.FD2
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
	{ID: "C4", FD2: FD2File},
	{ID: "I1", FD2: FD2File},
	{ID: "I2", FD2: FD2Pipe, Stalled: true},
	{ID: "I7", FD2: FD2Pipe, Stalled: true, Note: "a SIGINT each time the main thread sleeps in a new write(2) on the stalled pipe (a higher voluntary switch count), twice; fd 2 resumes at the next new wait or once the call is over"},
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
var LazyVariants = axes.LazyVariants

// NotReproduced names the matrix's rows the real column leaves out, and
// why; the report lists them (never a silent skip).
var NotReproduced = []struct{ Rows, Why string }{
	{"P4 T4 T6", "macOS only (XNU's poll for small pipes; no forced unwind of daemon threads); this is Linux"},
	{"T2", "needs Python 3.13.8 or later (daemon threads hang instead of unwinding); the extension plays T1 only"},
	{"T3 T5", "need Python 3.14"},
	{"H1 H2 H3 H4 H5 H6 H0", "the watchdog's own cells: nothing of CPython to calibrate"},
	{"R", "random schedules of the model (RF1-RF4 found by search); their mechanisms are the rows above"},
}
