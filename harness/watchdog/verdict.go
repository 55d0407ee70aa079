package watchdog

import (
	"context"
	"fmt"
	"logjam/verdict"
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
	blockedAt    time.Duration // when the child said it can only wait (Config.Blocked); 0: never
	quit         quitOutcome
	starved      time.Duration // added to the deadline: the child or the watchdog waited for a CPU
}

// classify decides the verdict from the observations, first that applies.
func classify(res *Result, in classifyInput) (verdict.Verdict, string) {
	switch in.cause {
	case stopDeadline, stopCycle, stopBlocked:
		var b strings.Builder
		switch in.cause {
		case stopCycle:
			fmt.Fprintf(&b, "reported a wait-for cycle after %s (fast mode)", roundDuration(in.cycleAt))
		case stopBlocked:
			fmt.Fprintf(&b, "said after %s that every thread waits for what only the process could end (fast mode; the deadline was %s)", roundDuration(in.blockedAt), in.cfg.Deadline)
		default:
			fmt.Fprintf(&b, "did not finish within %s", in.cfg.Deadline)
			if in.starved > 0 {
				fmt.Fprintf(&b, " (and %s more, the time it and the watchdog waited for a CPU)", roundDuration(in.starved))
			}
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
		return verdict.Hang, b.String()
	case stopContext:
		return verdict.Interrupted, fmt.Sprintf("interrupted (%v) after %s; killed at once", context.Cause(in.ctx), roundDuration(res.Duration))
	case stopKillAll:
		return verdict.Interrupted, fmt.Sprintf("interrupted by KillAll after %s; killed at once", roundDuration(res.Duration))
	}
	switch {
	case !in.stateKnown:
		return verdict.Failed, fmt.Sprintf("could not be waited for: %v", in.waitErr)
	case res.Signal != "":
		return verdict.Crash, fmt.Sprintf("killed by %s (signal %d)", res.Signal, res.SignalNumber)
	case res.ExitCode != 0:
		return verdict.Failed, fmt.Sprintf("exited with status %d", res.ExitCode)
	case in.stdoutUnseen:
		return verdict.NoMarker, fmt.Sprintf("exited with status 0, but its stdout is the caller's file, so the marker line %q could not be checked", in.marker)
	case !res.MarkerSeen:
		return verdict.NoMarker, fmt.Sprintf("exited with status 0 without printing the marker line %q", in.marker)
	}
	return verdict.Completed, fmt.Sprintf("exited with status 0 after printing %q", in.marker)
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
