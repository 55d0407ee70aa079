package schedule

import (
	"fmt"
	"logjam/verdict"
	"regexp"
	"slices"
	"strings"

	"logjam/scenario"
)

// The runtime every schedule names (Schedule.Platform, Python,
// Buffering): which platform and CPython the model plays, and how Python
// opened sys.stderr: "" (buffered) or "unbuffered" (python -u,
// PYTHONUNBUFFERED=1). It is no fault: a shrink simplifies it only at once.
var (
	Platforms  = []string{"linux", "macos"}
	Pythons    = []string{scenario.DefaultPython, "3.13.7", "3.13.8", "3.14", "3.10"}
	Bufferings = []string{"", "unbuffered"}
)

// patchRelease is an exact CPython release the model knows (3.10.Z to
// 3.15.Z): the real calibration replays a schedule on the interpreter it
// has (3.11.7, 3.13.0), which random search never draws.
var patchRelease = regexp.MustCompile(`^3\.1[0-5]\.[0-9]{1,2}$`)

// runtimeAxis is the platform, Python and buffering of a schedule.
type runtimeAxis struct{ noAxisPart }

func (runtimeAxis) Name() string { return "runtime" }

// Draws: its draw, at its place in the draw order (DrawAt).
func (a runtimeAxis) Draws() []DrawAt { return []DrawAt{{1, a.draw}} }

// FailureWords: a hang on macOS says so (its poll and its signal
// delivery are its own).
func (runtimeAxis) FailureWords(s Schedule, v verdict.Verdict) []string {
	if v == verdict.Hang && s.Platform == "macos" {
		return []string{"macos"}
	}
	return nil
}

// validateRuntime checks any schedule's platform, Python and buffering
// (a lazy-init schedule's too).
func (s Schedule) validateRuntime() error {
	switch {
	case !slices.Contains(Platforms, s.Platform):
		return fmt.Errorf("platform %q (accepted: %s)", s.Platform, strings.Join(Platforms, ", "))
	case !slices.Contains(Pythons, s.Python) && !patchRelease.MatchString(s.Python):
		return fmt.Errorf("python %q (accepted: %s, or a release 3.10.Z to 3.15.Z)", s.Python, strings.Join(Pythons, ", "))
	case !slices.Contains(Bufferings, s.Buffering):
		return fmt.Errorf("buffering %q (accepted: unbuffered, or none for buffered)", s.Buffering)
	}
	return nil
}

func (runtimeAxis) Steps(Schedule) []Step {
	return []Step{change(PhaseCoarse, "simplest runtime", func(c *Schedule) { c.Platform, c.Python, c.Buffering = "linux", "3.12", "" })}
}

// draw: the platform, the Python and its buffering of sys.stderr, first.
func (runtimeAxis) draw(d Drawer, s *Schedule, _ *drawState) {
	s.Platform = pick(d, Platforms, "platform")
	s.Python = pick(d, Pythons, "python")
	s.Buffering = pick(d, Bufferings, "buffering")
}
