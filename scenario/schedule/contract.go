package schedule

import "logjam/scenario"

// Contract is what the run of this schedule requires, as a matrix cell's
// contract: how it ends, how the parent arranges fd 2 and its signals, and
// what the ledger checks. It never holds a verdict.
func (s Schedule) Contract() scenario.Contract {
	c := scenario.Contract{Ends: scenario.EndsDone, FD2: scenario.FD2File}
	if s.Lazy != nil {
		c.Callbacks = s.Lazy.Callbacks()
		return c
	}
	for _, a := range Axes {
		a.Arrange(s.Sink, &c)
	}
	return c
}

// Runtime is the policy, platform, Python and buffering (simrt
// -buffering) the child runs with (a lazy-init schedule's log path plays
// no part: logjam).
func (s Schedule) Runtime() (policy, platform, python, buffering string) {
	buffering = "buffered"
	if s.Buffering != "" {
		buffering = s.Buffering
	}
	if s.Lazy != nil {
		return "logjam", s.Platform, s.Python, buffering
	}
	return s.Policy, s.Platform, s.Python, buffering
}
