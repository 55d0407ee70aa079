package watchdog

import (
	"context"
	"fmt"
	"strings"
	"time"
)

type classifyInput struct {
	cause        stopCause
	cfg          Config
	ctx          context.Context
	marker       string
	grace        time.Duration
	stdoutUnseen bool // stdout is the caller's file: the marker could not be checked
	stateKnown   bool // the child was reaped
	waitErr      error
	cycleAt      time.Duration
	quit         quitOutcome
}

// classify decides the verdict from the observations, first that applies.
func classify(res *Result, in classifyInput) (Verdict, string) {
	switch in.cause {
	case stopDeadline, stopCycle:
		var b strings.Builder
		if in.cause == stopCycle {
			fmt.Fprintf(&b, "reported a wait-for cycle after %s (fast mode)", roundDuration(in.cycleAt))
		} else {
			fmt.Fprintf(&b, "did not finish within %s", in.cfg.Deadline)
			if res.Cycle != nil {
				fmt.Fprintf(&b, " (it reported a wait-for cycle after %s)", roundDuration(in.cycleAt))
			}
		}
		switch {
		case in.quit.exited && in.quit.gotDump:
			b.WriteString("; ended after SIGQUIT (dump received)")
		case in.quit.exited:
			b.WriteString("; ended after SIGQUIT")
		case in.quit.gotDump:
			b.WriteString("; killed after SIGQUIT (dump received)")
		default:
			fmt.Fprintf(&b, "; killed after SIGQUIT (no dump within the %s grace period)", roundDuration(in.grace))
		}
		return Hang, b.String()
	case stopContext:
		return Interrupted, fmt.Sprintf("interrupted (%v) after %s; killed at once", context.Cause(in.ctx), roundDuration(res.Duration))
	case stopKillAll:
		return Interrupted, fmt.Sprintf("interrupted by KillAll after %s; killed at once", roundDuration(res.Duration))
	}
	switch {
	case !in.stateKnown:
		return Failed, fmt.Sprintf("could not be waited for: %v", in.waitErr)
	case res.Signal != "":
		return Crash, fmt.Sprintf("killed by %s (signal %d)", res.Signal, res.SignalNumber)
	case res.ExitCode != 0:
		return Failed, fmt.Sprintf("exited with status %d", res.ExitCode)
	case in.stdoutUnseen:
		return NoMarker, fmt.Sprintf("exited with status 0, but its stdout is the caller's file, so the marker line %q could not be checked", in.marker)
	case !res.MarkerSeen:
		return NoMarker, fmt.Sprintf("exited with status 0 without printing the marker line %q", in.marker)
	}
	return Completed, fmt.Sprintf("exited with status 0 after printing %q", in.marker)
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
