package cell

import (
	"strings"
	"testing"

	"logjam/harness/watchdog"
	"logjam/scenario"
	"logjam/telemetry"
	"logjam/verdict"
)

// A child that refused to finalize (exit status 4 and its reason on
// telemetry) is ERROR with the reason: a scenario error, never a verdict on
// the policy, and never LOST or FAILED.
func TestAScenarioErrorIsErrorWithItsReason(t *testing.T) {
	line, _ := telemetry.Encode(telemetry.ScenarioError{Reason: "scenario error: finalization refused: the promise"}, 1)
	ev, _ := telemetry.Parse(line)
	contract := scenario.Contract{Ends: scenario.EndsDone}
	for _, c := range []struct {
		code   int
		events []telemetry.Event
		want   verdict.Verdict
	}{
		{scenario.ExitScenarioError, []telemetry.Event{ev}, verdict.Error},
		{scenario.ExitScenarioError, nil, verdict.Failed}, // no reason given: an ordinary failure
		{3, []telemetry.Event{ev}, verdict.Failed},        // another status: not the refusal
	} {
		res := &watchdog.Result{Verdict: verdict.Failed, ExitCode: c.code, Events: c.events}
		out := &Outcome{Reason: "exited", Transcript: telemetry.Decode(c.events)}
		if got := Classify(contract, res, nil, out); got != c.want {
			t.Errorf("exit %d with %d events: %s, want %s", c.code, len(c.events), got, c.want)
		}
		if c.want == verdict.Error && !strings.Contains(out.Reason, "finalization refused") {
			t.Errorf("the reason does not say why: %q", out.Reason)
		}
	}
}

// How a run ended decides whether the ledger judges it: a kill the
// contract expects, without a cycle; the runtime's own abort (SIGABRT after
// its abort event) where the contract ends by an abort; a completion only
// where the contract ends by done. Anything else keeps the watchdog's word.
func TestOnlyTheContractsEndingIsJudged(t *testing.T) {
	abortLine, _ := telemetry.Encode(telemetry.Abort{Why: "the delegate aborts"}, 1)
	abortEv, _ := telemetry.Parse(abortLine)
	cycleLine, _ := telemetry.Encode(telemetry.Cycle{Text: "deadlock: thread A ..."}, 1)
	cycleEv, _ := telemetry.Parse(cycleLine)
	for _, c := range []struct {
		name   string
		ends   scenario.Ending
		res    watchdog.Result
		events []telemetry.Event
		want   verdict.Verdict
	}{
		{"killed by design, no cycle", scenario.EndsKilled, watchdog.Result{Verdict: verdict.Hang}, nil, verdict.OK},
		{"killed by design, but a cycle", scenario.EndsKilled, watchdog.Result{Verdict: verdict.Hang, Cycle: &cycleEv}, []telemetry.Event{cycleEv}, verdict.Hang},
		{"the runtime's abort", scenario.EndsAbort, watchdog.Result{Verdict: verdict.Crash, Signal: "SIGABRT"}, []telemetry.Event{abortEv}, verdict.OK},
		{"a SIGABRT that is not the runtime's", scenario.EndsAbort, watchdog.Result{Verdict: verdict.Crash, Signal: "SIGABRT"}, nil, verdict.Crash},
		{"another signal where an abort is due", scenario.EndsAbort, watchdog.Result{Verdict: verdict.Crash, Signal: "SIGSEGV"}, []telemetry.Event{abortEv}, verdict.Crash},
		{"completed where an abort is due", scenario.EndsAbort, watchdog.Result{Verdict: verdict.Completed}, nil, verdict.Failed},
		{"completed where a kill is due", scenario.EndsKilled, watchdog.Result{Verdict: verdict.Completed}, nil, verdict.Failed},
		{"completed", scenario.EndsDone, watchdog.Result{Verdict: verdict.Completed}, nil, verdict.OK},
		{"a hang where done is due", scenario.EndsDone, watchdog.Result{Verdict: verdict.Hang}, nil, verdict.Hang},
	} {
		res := c.res
		res.Events = c.events
		out := &Outcome{Transcript: telemetry.Decode(c.events)}
		if got := Classify(scenario.Contract{Ends: c.ends}, &res, nil, out); got != c.want {
			t.Errorf("%s: %s, want %s (%s)", c.name, got, c.want, out.Reason)
		}
	}
}
