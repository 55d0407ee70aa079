// Package cell runs one cell of the matrix: it builds the child's command,
// arranges its fd 2, runs it under the watchdog, and turns what the child
// did into one verdict with its evidence. It never sees an expected verdict.
package cell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"logjam/failpoints"
	"logjam/harness/ledger"
	"logjam/harness/watchdog"
	"logjam/internal/config"
	"logjam/internal/cpuslot"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/signals"
	"logjam/telemetry"
	"logjam/verdict"
)

// Spec is one cell and how to run it.
type Spec struct {
	scenario.Cell
	// Failpoints are added to the child's GO_FAILPOINTS (validated first).
	Failpoints failpoints.Set
	// Deadline overrides the profile's (before scaling), when set.
	Deadline time.Duration
	// Schedule is scenario R's random schedule (schedule.Encode); its
	// contract is the schedule's.
	Schedule string
}

// Args is the child's command line after the binary.
func (s Spec) Args() []string {
	a := []string{"-scenario", s.Scenario}
	for _, kv := range [][2]string{{"-policy", s.Policy}, {"-platform", s.Platform}, {"-python", s.Python}, {"-buffering", s.Buffering}, {"-variant", s.Variant}, {"-backend", s.Backend}, {"-schedule", s.Schedule}} {
		if kv[1] != "" {
			a = append(a, kv[0], kv[1])
		}
	}
	return a
}

// Outcome is one observed cell.
type Outcome struct {
	scenario.Cell
	Observed verdict.Verdict `json:"observed"`
	Ms       int64           `json:"ms"`
	Reason   string          `json:"reason"`
	Cycle    string          `json:"cycle,omitempty"`
	Ledger   ledger.Evidence `json:"ledger"`
	Command  string          `json:"command"`

	// Raw material for an evidence bundle; not in the report.
	Result     *watchdog.Result      `json:"-"`
	Transcript *telemetry.Transcript `json:"-"`
	FD2        []byte                `json:"-"`
}

// Run runs the cell's child binary bin under the profile's deadline.
func Run(ctx context.Context, bin string, spec Spec, prof config.Profile) (*Outcome, error) {
	prog, err := scenario.Lookup(spec.Scenario)
	if err != nil {
		return nil, err
	}
	if err := spec.Failpoints.Validate(); err != nil {
		return nil, err
	}
	contract := prog.Contract
	if spec.Schedule != "" {
		s, err := schedule.Decode(spec.Schedule)
		if err != nil {
			return nil, err
		}
		contract = s.Contract()
	}
	// A CPU slot while the child computes; given back when it can only
	// wait for its deadline (a reported cycle, or a program that blocks by
	// design once it speaks) or is done.
	release, err := cpuslot.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	fd2, err := ArrangeFD2(contract.FD2, contract.FD2Stalled, contract.PipeSize)
	if err != nil {
		return nil, err
	}

	// SIGINT's disposition at start is the contract's, never the caller's.
	sigint := signals.Default
	if contract.SigintIgnored {
		sigint = signals.Ignored
	}
	args := append([]string{"-sigint", string(sigint), "-fd2-acks"}, spec.Args()...)
	cmd := exec.Command(bin, args...)
	cmd.Env = childEnv(spec.Failpoints)
	cmd.Stderr = fd2.Child()
	deadline := prof.Deadline
	if spec.Deadline > 0 {
		deadline = spec.Deadline
	}
	sig := &signals.AtMark{Signal: syscall.SIGINT, Mark: telemetry.MarkSIGINT}
	// A stall asked at a mark is acknowledged once the reader is stalled:
	// the child writes on only then.
	stallAck := &signals.AtMark{Signal: signals.StallAck, Mark: telemetry.MarkFD2Stall}
	// A room check that found no room asks the reader to read what the
	// pipe holds (unless stalled) and waits for the same signal.
	fd2.AckReads(stallAck.Send)
	mode := watchdog.Fast
	if prof.Mode == "strict" {
		mode = watchdog.Strict
	}
	res, err := watchdog.Run(ctx, cmd, watchdog.Config{
		Deadline:   time.Duration(float64(deadline) * prof.TimeoutScale),
		Scale:      prof.TimeoutScale,
		GraceFloor: prof.GraceFloor,
		Mode:       mode,
		// A program that blocks by design says when nothing in it moves
		// again: what fd 2 holds then is what the deadline would find.
		Blocked: func(ev telemetry.Event) bool {
			m, ok := telemetry.As[telemetry.Mark](ev)
			return ok && m.Name == telemetry.MarkBlocked && contract.Ends == scenario.EndsKilled
		},
		OnEvent: func(ev telemetry.Event) {
			fd2.OnEvent(ev)
			sig.OnEvent(ev)
			stallAck.OnEvent(ev)
			if ev.Ev == telemetry.KindCycle || contract.Ends == scenario.EndsKilled {
				release()
			}
		},
	})
	if err != nil {
		fd2.Abandon()
		return nil, err
	}
	fd2Bytes, fd2Err := fd2.Collect()
	return Observe(spec, contract, res, fd2Bytes, fd2Err), nil
}

// Observe turns what a run did (the watchdog's result and fd 2's bytes) into
// the cell's outcome and verdict; a simulated cell and a real-CPython run
// (calibrate) are judged alike here.
func Observe(spec Spec, contract scenario.Contract, res *watchdog.Result, fd2 []byte, fd2Err error) *Outcome {
	out := &Outcome{
		Cell: spec.Cell,
		Ms:   res.Duration.Milliseconds(), Reason: res.Reason, Command: res.Command,
		Result: res, Transcript: telemetry.Decode(res.Events), FD2: fd2,
	}
	if fd2Err != nil {
		out.Reason += "; " + fd2Err.Error()
	}
	if res.Cycle != nil {
		out.Cycle = res.Cycle.Text()
	}
	out.Observed = Classify(contract, res, fd2, out)
	return out
}

// Errored is the outcome of a cell whose run could not start (a bad spec,
// refused failpoints, a pipe that could not be made): verdict.Error with
// the reason, so the cell is a row of the matrix and never vanishes.
func Errored(spec Spec, err error) *Outcome {
	return &Outcome{
		Cell:     spec.Cell,
		Observed: verdict.Error, Reason: "the run could not start: " + err.Error(),
	}
}

// Classify: HANG > CRASH > (FAILED, NOMARKER) > the ledger's verdicts. An
// ending the contract expects (an abort, a kill at the deadline) is not a
// failure: the lines are judged from what the streams hold. out must carry
// the run's Transcript; Classify fills its Ledger and extends its Reason.
// The calibrate suite classifies real runs with it: one owner of the rule.
func Classify(c scenario.Contract, res *watchdog.Result, fd2 []byte, out *Outcome) verdict.Verdict {
	judge := func() verdict.Verdict {
		j := ledger.Judge(c, out.Transcript, fd2)
		out.Ledger = j.Evidence
		if j.Evidence.Detail != "" {
			out.Reason += "; " + j.Evidence.Detail
		}
		return j.Verdict
	}
	switch res.Verdict {
	case verdict.Hang:
		if c.Ends == scenario.EndsKilled && res.Cycle == nil {
			return judge()
		}
	case verdict.Crash:
		if c.Ends == scenario.EndsAbort && res.Signal == "SIGABRT" && len(out.Transcript.Aborts) > 0 {
			return judge()
		}
	case verdict.Failed:
		if res.ExitCode == scenario.ExitScenarioError && len(out.Transcript.ScenarioErrors) > 0 {
			out.Reason += "; " + out.Transcript.ScenarioErrors[0].Reason
			return verdict.Error
		}
	case verdict.Completed:
		if c.Ends != scenario.EndsDone {
			out.Reason += fmt.Sprintf("; the contract says the run ends by %s, but it completed", c.Ends)
			return verdict.Failed
		}
		return judge()
	}
	return res.Verdict
}

// childEnv is the parent's environment with GO_FAILPOINTS set to exactly
// the cell's points: an ambient value would make the cell unreproducible.
func childEnv(fps failpoints.Set) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GO_FAILPOINTS=") {
			env = append(env, kv)
		}
	}
	if len(fps) > 0 {
		env = append(env, "GO_FAILPOINTS="+fps.Env())
	}
	return env
}

// Probe runs the child's probe program with the probe failpoint set to
// value and reports an error unless the child saw that value: injection
// that does not fire would make every cell meaningless.
func Probe(bin string, value int) (string, error) {
	cmd := exec.Command(bin, "-scenario", "H0")
	cmd.Env = childEnv(failpoints.Set{{Name: failpoints.Probe, Terms: fmt.Sprintf("return(%d)", value)}})
	out, err := cmd.CombinedOutput()
	want := fmt.Sprintf("probe %d", value)
	if err != nil || !strings.Contains(string(out), want) {
		return string(out), fmt.Errorf("child printed %q, want %q (err %v)", out, want, err)
	}
	return string(out), nil
}
