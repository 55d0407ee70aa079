package calibrate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"logjam/harness/cell"
	"logjam/harness/report"
	"logjam/harness/watchdog"
	"logjam/internal/cpuslot"
	"logjam/scenario"
	"logjam/signals"
	"logjam/telemetry"
	"logjam/verdict"
)

// The bufferings of sys.stderr, spelled as scenario.Cell.Buffering spells
// them ("" is buffered).
const (
	Buffered   = ""           // PYTHONUNBUFFERED unset: TextIOWrapper -> BufferedWriter -> FileIO
	Unbuffered = "unbuffered" // PYTHONUNBUFFERED=1 (python -u): write_through to a raw FileIO
)

// BufferingName is the buffering as a word ("buffered" for "").
func BufferingName(p string) string {
	if p == Buffered {
		return "buffered"
	}
	return p
}

// KindPythonbufThrows is the extension's event: its pythonbuf sink threw a
// Python error out of a write (the noexcept sentry destructor terminates).
const KindPythonbufThrows = "pythonbuf-throws"

// Options tune one real run.
type Options struct {
	Scale      float64       // the timeout-scale knob (1 when zero)
	GraceFloor time.Duration // watchdog's (its default when zero)
	Deadline   time.Duration // overrides the row's when set
	FD2        string        // "" (the row's), FD2Socket or FD2NoProc
	// CheckGIL runs the interpreter with PYTHONMALLOC=debug, whose
	// allocator ends the process with a fatal error (SIGABRT) when Python
	// allocates without the GIL: a sink that touches Python from a thread
	// without it (a native worker's) is a CRASH every time, not only when
	// the undefined behaviour happens to crash (calibrate/sink_test.go,
	// python_without_gil.cpp). A user's sink runs with it.
	CheckGIL bool
}

// Run plays row under policy (or lazy variant) on the interpreter in, with
// the extension built in dir (Build), under the watchdog, and classifies it
// with cell's rule from the scenario's contract: both columns are judged
// alike. The outcome is a cell.Outcome whose Python is the interpreter's
// version.
func Run(ctx context.Context, in Interpreter, dir string, row Row, policy, variant, buffering string, o Options) (*cell.Outcome, error) {
	contract, err := row.Contract()
	if err != nil {
		return nil, err
	}
	var fd2 fd2Arrangement
	if o.FD2 == FD2Socket {
		fd2, err = newSocketFD2()
	} else {
		fd2, err = cell.ArrangeFD2(row.FD2, row.Stalled, 0)
	}
	if err != nil {
		return nil, err
	}
	sink := policy
	if sink == "" {
		sink = "fd2" // lazy init: the sink plays no part
	}
	// -S: without site's start-up hooks. Nothing of site plays in a row
	// (run_row.py imports the standard library and logjamext, on
	// PYTHONPATH), and a .pth file runs its code at every start: one on this
	// machine imports certifi, 30 ms of CPU of every run's 55.
	args := []string{in.Path, "-S", filepath.Join(dir, "run_row.py"), row.ID, sink}
	if row.Ignored {
		// sh's trap "" sets SIG_IGN, which exec keeps: Python then
		// installs no SIGINT handler.
		args = append([]string{"/bin/sh", "-c", `trap "" INT; exec "$0" "$@"`}, args...)
	}
	if o.FD2 == FD2NoProc {
		args = noProcArgs(args)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = childEnv(dir, variant, buffering)
	if o.CheckGIL {
		cmd.Env = append(cmd.Env, "PYTHONMALLOC=debug")
	}
	if row.Schedule != "" {
		cmd.Env = append(cmd.Env, "LOGJAM_SCHEDULE="+row.Schedule)
	}
	cmd.Stderr = fd2.Child()
	deadline := row.Deadline
	if deadline == 0 {
		deadline = 8 * time.Second
	}
	if o.Deadline > 0 {
		deadline = o.Deadline
	}
	scale := o.Scale
	if scale <= 0 {
		scale = 1
	}
	sig := &signals.AtMark{Signal: syscall.SIGINT, Mark: telemetry.MarkSIGINT}
	// The row's deadline counts from the interpreter's "start" event, not
	// from exec: under load an interpreter can take seconds to start, and a
	// row that has not begun has not hung. The watchdog's own deadline adds
	// a start allowance; when the row's passes, the threads' wait state is
	// read from outside (/proc) and the child is killed: a HANG.
	rowDeadline := time.Duration(float64(deadline) * scale)
	// A CPU slot (when the caller serves them: cpuslot) while the child
	// computes: its interpreter's start and its row, until it uses less
	// than a quarter of a core (hang.go, computeWindow).
	release, err := cpuslot.Acquire(ctx)
	if err != nil {
		fd2.Abandon()
		return nil, err
	}
	defer release()
	// A hang is confirmed as soon as two readings of the wait-for state,
	// hangSettle (scaled) apart, prove it (hang.go, waitfor.go).
	hang := &hangWatch{cmd: cmd, after: rowDeadline, settle: time.Duration(float64(hangSettle) * scale), waiting: release}
	defer hang.stop()
	res, err := watchdog.Run(ctx, cmd, watchdog.Config{
		Deadline:   rowDeadline + time.Duration(float64(startAllowance)*scale),
		Scale:      scale,
		GraceFloor: o.GraceFloor,
		Mode:       watchdog.Fast,
		OnEvent: func(ev telemetry.Event) {
			if ev.Ev == "start" {
				hang.arm()
			}
			fd2.OnEvent(ev)
			sig.OnEvent(ev)
			hang.event(ev) // after its actions: a SIGINT a mark asked for has been sent
		},
	})
	if err != nil {
		fd2.Abandon()
		return nil, err
	}
	hang.stop()
	cycle, proven := hang.confirmed()
	if seen := hang.observed(); seen != "" {
		res.Verdict = verdict.Hang
		if proven {
			res.Reason = fmt.Sprintf("hung: %s; killed", seen)
		} else {
			res.Reason = fmt.Sprintf("did not finish within %s of its start; %s; killed", rowDeadline, seen)
		}
	}
	b, ferr := fd2.Collect()
	spec := cell.Spec{Cell: scenario.Cell{Scenario: row.ID, Policy: policy, Platform: scenario.DefaultPlatform, Python: in.Version, Buffering: buffering, Variant: variant}}
	out := cell.Observe(spec, contract, res, b, ferr)
	if proven {
		out.Cycle = cycle // the real child's wait-for state, named (the watchdog saw no cycle event)
	}
	if out.Observed == verdict.Crash && res.Signal == "SIGABRT" && threw(res.Events) {
		out.Reason += "; pythonbuf threw out of the noexcept ostream::sentry destructor (std::terminate)"
	}
	return out, nil
}

func threw(events []telemetry.Event) bool {
	for _, e := range events {
		if e.Ev == KindPythonbufThrows {
			return true
		}
	}
	return false
}

// childEnv: the parent's environment with PYTHONUNBUFFERED set or unset
// EXPLICITLY by buffering, the extension on PYTHONPATH, and nothing ambient
// that changes the interpreter (PYTHONSTARTUP, PYTHONWARNINGS...).
func childEnv(dir, variant, buffering string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PYTHON") || k == "LOGJAM_VARIANT" || k == "LOGJAM_SCHEDULE" || k == "GO_FAILPOINTS" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8")
	if buffering == Unbuffered {
		env = append(env, "PYTHONUNBUFFERED=1")
	}
	if variant != "" {
		env = append(env, "LOGJAM_VARIANT="+variant)
	}
	return env
}

// Bundle is the real run's evidence bundle as the matrix row c (no
// Replay: a real run is replayed by its command, not by simrt).
func Bundle(o *cell.Outcome, c report.Cell) report.Bundle {
	b := report.Bundle{Cell: c, FD2: o.FD2}
	if o.Result != nil {
		b.Stdout, b.Events = o.Result.Stdout, o.Result.Events
	}
	return b
}
