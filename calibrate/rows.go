package calibrate

import (
	"fmt"
	"time"

	"logjam/internal/axes"
	"logjam/scenario"
	"logjam/scenario/schedule"
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
	// Schedule is a random-found row's schedule (schedule.Findings, as
	// suites/random plays it): its contract is the schedule's, and the
	// simulated cell plays it as scenario R with the column's policy, the
	// interpreter's version and the buffering put in.
	Schedule string
	// LeftOut are cells of the row not played, each with why (the report
	// lists them: never a silent skip).
	LeftOut []LeftOut
	// Note says how the real run differs from the simulated one, if at all.
	Note string
}

// Rows are the rows the real column reproduces, in the matrix's order.
var Rows = []Row{
	{ID: "D1", FD2: FD2Pipe, Stalled: true, Deadline: 4 * time.Second,
		Note: "fd 2 is a full one-page pipe the parent resumes once A blocks in write(2) and, if A's write released the GIL, B has blocked on L (or got it): the GIL window is made deterministic; with a file it exists but B winning it is a race"},
	{ID: "D2", FD2: FD2File, Deadline: 4 * time.Second,
		Note: "the slow stream's write releases the GIL until B has blocked on L or got it (a polled condition, not a fixed sleep)"},
	{ID: "D3", FD2: FD2File, Deadline: 4 * time.Second,
		Note: "the call's 2 pool threads are std::threads of the extension (no Python thread state) that log through the sink; the call joins them with the GIL held"},
	{ID: "D4", FD2: FD2File, Deadline: 4 * time.Second,
		Note: "D3 inside wurlitzer's capture (a one-page pipe, 1024-byte reads, a forwarder thread that needs the GIL)"},
	{ID: "D5", FD2: FD2File, Deadline: 4 * time.Second,
		Note: "a real os.fork(); T1 is a std::thread of the extension holding the header's keep lock (the historical sinks own none) until a prepare handler of the extension's own says the fork has begun; the child's hang is ended by alarm(2), and the parent, having reaped it, then waits for ever"},
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
	{ID: "I8", FD2: FD2Pipe, Stalled: true, Note: "I2's watcher and resume; the handler prints a line to sys.stderr and returns"},
	{ID: "I3", FD2: FD2File},
	{ID: "I4", FD2: FD2File},
	{ID: "I5", FD2: FD2File, Ignored: true},
	{ID: "I6", FD2: FD2File},
	{ID: "F1", FD2: FD2File},
	{ID: "F2", FD2: FD2File, Deadline: 2 * time.Second},
	{ID: "F3", FD2: FD2File},
	{ID: "F4", FD2: FD2Pipe, Note: "paced: one line per 25 ms of delegate work with the GIL held, as the simulated row"},
	{ID: "F5", FD2: FD2File, Note: "T1 is a threading.Thread whose target logs 2 lines outside any call (execute_logging, GIL held), joined before the call"},
	{ID: "F6", FD2: FD2File, Note: "wurlitzer's capture made in the script after the extension was imported; its forwarder reads on the barrier (when every other thread waits for what only the process can end), as the simulated forwarder"},
	{ID: "F7", FD2: FD2File, Note: "F6 with ipykernel's capture (sys.stderr its OutStream)"},
	{ID: "F8", FD2: FD2File, Note: "ipykernel's capture made before the sink is installed (ext.setup again after it); the OutStream's _original_stdstream_copy is its saved copy, as ipykernel's"},
	{ID: "F9", FD2: FD2File, Note: "wurlitzer's capture made before the sink is installed (ext.setup again after it)"},
	{ID: "F10", FD2: FD2File, Note: "the crash is a real SIGTERM raised on the main thread at the model's point (the header's sink: in its observer's kept_outside, its lock held; the others: once the sink returned), its handler logging through logjam::fatal"},
	{ID: "U1", FD2: FD2File},
	{ID: "U2", FD2: FD2File},
	{ID: "U3", FD2: FD2File},
	{ID: "T1", FD2: FD2File, Note: "daemon threads loop through calls while the interpreter exits (this interpreter is before 3.13.8); finalization starts once each waits again (the last atexit callback: the model's barrier), and the interpreter is deleted once each has ended (the module's m_free)"},
	{ID: "RF1", FD2: FD2File, Deadline: 5 * time.Second, Schedule: schedule.Findings["RF1"],
		Note: "sys.stderr a capture; one call logs a line, then 8 lines outside any call (a destructor, GIL held)"},
	{ID: "RF2", FD2: FD2File, Deadline: 5 * time.Second, Schedule: schedule.Findings["RF2"],
		Note: "wurlitzer's capture (a 4096-byte pipe, 1024-byte reads, a forwarder that needs the GIL); sys.stderr raises OSError on every write; one call logs 64 lines"},
	{ID: "RF3", FD2: FD2File, Deadline: 5 * time.Second, Schedule: schedule.Findings["RF3"],
		LeftOut: []LeftOut{{Policy: "pystderr", Buffering: Buffered,
			Why: "the real outcome is both HANG and REORDERED: pybind11's pythonbuf writes and then flushes, two holds of the BufferedWriter's lock, " +
				"a semaphore that hands nothing over, so whether T2 (woken at the end of MainThread's write) or MainThread's flush takes it next " +
				"is CPython's race, inside pythonbuf where the harness has no switch point (HANG 9 of 10 on 3.11.7): docs/FINDINGS.md"},
			{Policy: "pystderr", Buffering: Unbuffered,
				Why: "the real outcome is both HANG and REORDERED here too: pythonbuf's write(2) lets the GIL go inside pybind11, where the harness " +
					"has no switch point, and T2 may take it there and flush pythonbuf's one shared buffer, MainThread's line still in it " +
					"(REORDERED in the fresh-clone CI at 00f854f and again within 40 plays on a quiet machine): docs/FINDINGS.md"}},
		Note: "wurlitzer's capture (8192-byte pipe); each thread's calls run natively back to back (no bytecode, so no switch interval, between them); T2 asks for the GIL once MainThread's calls begin and gets it at MainThread's first release of it (a forced switch: T2 is seen asleep in the GIL's wait first), takes the second backend's lock and logs once MainThread waits (asleep in a wait that does not end by itself; for the GIL, after asking for a forced switch)"},
	{ID: "RF4", FD2: FD2File, Deadline: 5 * time.Second, Schedule: schedule.Findings["RF4"],
		Note: "wurlitzer's capture (4096-byte pipe); 128 lines outside any call (GIL held), the capture closed, then a daemon thread loops through calls while the interpreter exits (as T1)"},
	{ID: "L1", FD2: FD2File, Deadline: 3 * time.Second, Variants: LazyVariants},
	{ID: "L2", FD2: FD2File, Deadline: 3 * time.Second, Variants: LazyVariants},
	{ID: "L3", FD2: FD2File, Deadline: 3 * time.Second, Variants: LazyVariants},
}

// LeftOut is one cell of a row that is not played: a policy under one
// buffering.
type LeftOut struct {
	Policy, Buffering, Why string
}

// Plays reports whether the row plays policy under buffering.
func (r Row) Plays(policy, buffering string) bool {
	for _, l := range r.LeftOut {
		if l.Policy == policy && l.Buffering == buffering {
			return false
		}
	}
	return true
}

// LazyVariants are the torch.cuda._lazy_call variants.
var LazyVariants = axes.LazyVariants

// NotReproduced names the matrix's rows the real column leaves out, and
// why; the report lists them (never a silent skip).
var NotReproduced = []struct{ Rows, Why string }{
	{"P4 T4 T6", "macOS only (XNU's poll for small pipes; no forced unwind of daemon threads); this is Linux"},
	{"T2", "needs Python 3.13.8 or later (daemon threads hang instead of unwinding); the extension plays T1 only"},
	{"T3 T5", "need Python 3.14"},
	{"E1 E2 E3 E4", "the kernel's refusal is the model's failpoint on its own write(2) calls; a real interpreter's write(2) has none here (a real ENOSPC is fd 2 on /dev/full, a real EPIPE a closed reader: neither refuses from the 3rd write on)"},
	{"H1 H2 H3 H4 H5 H6 H0", "the watchdog's own cells: nothing of CPython to calibrate"},
	{"R", "random schedules of the model beyond the rows random search found and kept (RF1-RF4, played above)"},
}

// ScheduleFor is the row's schedule for one simulated cell: policy, the
// interpreter's version and the buffering put in; ok is false for a
// catalogued row.
func (r Row) ScheduleFor(policy, python, buffering string) (schedule.Schedule, bool, error) {
	if r.Schedule == "" {
		return schedule.Schedule{}, false, nil
	}
	s, err := schedule.Decode(r.Schedule)
	if err != nil {
		return s, true, fmt.Errorf("row %s: %w", r.ID, err)
	}
	s.Policy, s.Python, s.Buffering = policy, python, buffering
	if err := s.Validate(); err != nil {
		return s, true, fmt.Errorf("row %s: %w", r.ID, err)
	}
	return s, true, nil
}

// Contract is what the row's run requires: the catalogued scenario's, or
// the schedule's.
func (r Row) Contract() (scenario.Contract, error) {
	if r.Schedule != "" {
		s, err := schedule.Decode(r.Schedule)
		if err != nil {
			return scenario.Contract{}, fmt.Errorf("row %s: %w", r.ID, err)
		}
		return s.Contract(), nil
	}
	info, err := scenario.Lookup(r.ID)
	if err != nil {
		return scenario.Contract{}, err
	}
	return info.Contract, nil
}
