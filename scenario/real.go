package scenario

import "time"

// Real is how the real column (calibrate/) plays a scenario on real
// CPython with the calibration's extension: how the parent arranges the
// real child, its deadline, the cells it leaves out, how it differs from
// the simulated play; or, in NotHere, why this machine cannot play it.
// It sits on the scenario's catalogue entry so that a row is declared in
// one place (docs/ADDING-A-SCENARIO.md, step 8).
type Real struct {
	FD2      FD2           // FD2File, FD2ParentPipe or FD2PTY
	Stalled  bool          // the parent's reader starts stalled
	Ignored  bool          // SIGINT ignored at start
	Deadline time.Duration // before the watchdog's scale; 0: calibrate's default
	// LeftOut are cells of the row not played, each with why (the
	// calibration's report lists them: never a silent skip).
	LeftOut []LeftOut
	// Note says how the real run differs from the simulated one, if at all.
	Note string
	// NotHere says why the real column cannot play the row on this
	// machine (another OS, an interpreter it lacks, nothing of CPython to
	// calibrate); "" when it plays it.
	NotHere string
}

// LeftOut is one cell of a real row that is not played: a policy under
// one buffering of sys.stderr ("" buffered, "unbuffered").
type LeftOut struct {
	Policy, Buffering, Why string
}

// Plays reports whether the real column plays the row here.
func (r Real) Plays() bool { return r.NotHere == "" && r.FD2 != "" }
