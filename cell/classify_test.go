package cell

import (
	"strings"
	"testing"

	"logjam/scenario"
	"logjam/telemetry"
	"logjam/verdict"
	"logjam/watchdog"
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
		if got := classify(contract, res, nil, out); got != c.want {
			t.Errorf("exit %d with %d events: %s, want %s", c.code, len(c.events), got, c.want)
		}
		if c.want == verdict.Error && !strings.Contains(out.Reason, "finalization refused") {
			t.Errorf("the reason does not say why: %q", out.Reason)
		}
	}
}
