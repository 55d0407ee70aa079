package cell

import (
	"testing"

	"logjam/failpoints"
	"logjam/harness/report"
	"logjam/scenario"
)

// A bundle's Replay names the whole cell, a random schedule included, so
// logjam replay plays the very run again.
func TestSpecOfAReplayIsTheCellThatRan(t *testing.T) {
	spec := Spec{Cell: scenario.Cell{Scenario: "R", Policy: "logjam", Platform: "linux", Python: "3.12"}, Schedule: "eyJ9", Failpoints: failpoints.Set{{Name: failpoints.StreamWriteOSError, Terms: "return(true)"}}}
	r := report.Replay{Cell: scenario.Cell{Scenario: spec.Scenario, Policy: spec.Policy, Platform: spec.Platform, Python: spec.Python}, Failpoints: spec.Failpoints.Env(), Schedule: spec.Schedule}
	got, err := SpecOf(r)
	if err != nil {
		t.Fatal(err)
	}
	if got.Schedule != spec.Schedule || got.Failpoints.Env() != spec.Failpoints.Env() || got.Scenario != "R" {
		t.Errorf("got %+v, want %+v", got, spec)
	}
}
