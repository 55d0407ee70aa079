package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"logjam/failpoints"
	"logjam/internal/axes"
	"logjam/internal/config"
	"logjam/scenario"
	"logjam/scenario/schedule"
)

// Replay is what a replay needs to run a bundle's cell again exactly: the
// cell's own parameters (the child's flags, its failpoints, its deadline),
// the profile's knobs, and the child binary by digest (childbin). The fd-2
// arrangement, the signals and SIGINT's disposition at start follow from
// the scenario's contract. A bundle names no path and no module: a replay
// runs a binary from the cache or one built from its own module.
type Replay struct {
	scenario.Cell
	Failpoints string         `json:"failpoints,omitempty"`  // GO_FAILPOINTS
	Schedule   string         `json:"schedule,omitempty"`    // scenario R's random schedule
	Deadline   time.Duration  `json:"deadline_ns,omitempty"` // the cell's own, before scaling; 0: the profile's
	Profile    config.Profile `json:"profile"`
	Binary     string         `json:"binary_sha256"`
}

// ReplayRecordFile is the bundle file that holds its Replay.
const ReplayRecordFile = "replay.json"

// MaxReplayDeadline bounds a replayed child's deadline (after scaling): a
// bundle cannot make a replay wait for ever.
const MaxReplayDeadline = 10 * time.Minute

// The values of the child's axes that sim's parsers accept and
// internal/axes does not name (cmd/simrt refuses anything else too; a
// bundle is checked before any child runs).
var (
	replayPlatforms = []string{"", "linux", "macos"}
	replayBuffering = []string{"", "buffered", "unbuffered"}
	replayBackends  = []string{"", "cuda", "xpu", "mtia"}
	pythonVersion   = lazyRegexp(`^3\.1[0-5](\.[0-9]{1,2})?$`)
	sha256Hex       = lazyRegexp(`^[0-9a-f]{64}$`)
	profileName     = lazyRegexp(`^[A-Za-z0-9_-]{1,64}$`)
)

// upgrade moves the old spellings a bundle written before may carry to
// their names (scenario.Cell.Upgrade, config.Profile.Upgrade).
func (r *Replay) upgrade() error {
	if err := r.Cell.Upgrade(); err != nil {
		return err
	}
	return r.Profile.Upgrade()
}

// IsDigest reports whether s is a SHA-256 as a bundle names one: 64
// lowercase hex digits.
func IsDigest(s string) bool { return sha256Hex().MatchString(s) }

// Validate checks every field against the catalogues (scenarios, policies,
// lazy-init variants, failpoints, the profile's knobs) before anything
// runs; the first problem is the error.
func (r *Replay) Validate() error {
	oneOf := func(field, v string, accepted []string) error {
		if slices.Contains(accepted, v) {
			return nil
		}
		return fmt.Errorf("%s %q is not one of the catalogue's (accepted: %s)", field, v, strings.Join(slices.DeleteFunc(slices.Clone(accepted), func(s string) bool { return s == "" }), ", "))
	}
	if !IsDigest(r.Binary) {
		return fmt.Errorf("binary_sha256 %q is not a SHA-256 (64 lowercase hex digits)", clip(r.Binary))
	}
	if _, err := scenario.Lookup(r.Scenario); err != nil {
		return fmt.Errorf("scenario %q is not in the catalogue", clip(r.Scenario))
	}
	for _, c := range []struct {
		field, v string
		accepted []string
	}{
		{"policy", r.Policy, append([]string{""}, axes.Policies...)},
		{"platform", r.Platform, replayPlatforms},
		{"buffering", r.Buffering, replayBuffering},
		{"variant", r.Variant, append([]string{""}, axes.LazyVariants...)},
		{"backend", r.Backend, replayBackends},
	} {
		if err := oneOf(c.field, clip(c.v), c.accepted); err != nil {
			return err
		}
	}
	if r.Python != "" && !pythonVersion().MatchString(r.Python) {
		return fmt.Errorf("python %q is not a version the model plays (accepted: 3.10 to 3.15, as X.Y or X.Y.Z)", clip(r.Python))
	}
	if _, err := failpoints.Parse(r.Failpoints); err != nil {
		return fmt.Errorf("failpoints: %v", err)
	}
	if r.Schedule != "" {
		if r.Scenario != "R" {
			return fmt.Errorf("a schedule belongs to scenario R, not %s", r.Scenario)
		}
		if _, err := schedule.Decode(r.Schedule); err != nil {
			return fmt.Errorf("schedule: %v", err)
		}
	}
	if r.Deadline < 0 || r.Deadline > MaxReplayDeadline {
		return fmt.Errorf("deadline_ns %d is not between 0 and %s", r.Deadline, MaxReplayDeadline)
	}
	if !profileName().MatchString(r.Profile.Name) {
		return fmt.Errorf("profile name %q is not a profile's name", clip(r.Profile.Name))
	}
	if err := r.Profile.Validate("the bundle"); err != nil {
		return err
	}
	for _, d := range []time.Duration{r.Profile.ScaledDeadline(), time.Duration(float64(r.Deadline) * r.Profile.TimeoutScale)} {
		if d > MaxReplayDeadline || d < 0 {
			return fmt.Errorf("profile %s: a scaled deadline of %s is beyond %s", r.Profile.Name, d, MaxReplayDeadline)
		}
	}
	// The knobs a replay may run with when no checkout's ginkgo.yml is
	// around to vouch for them: a grace floor of a million hours passed
	// the profile's own rules (TestReplayRefusesACraftedBundleWithNothingRunOrTouched).
	if g := time.Duration(float64(r.Profile.GraceFloor) * r.Profile.TimeoutScale); g > MaxReplayGrace {
		return fmt.Errorf("profile %s: a scaled grace floor of %s is beyond %s", r.Profile.Name, g, MaxReplayGrace)
	}
	if r.Profile.Repeat > MaxReplayRepeat {
		return fmt.Errorf("profile %s: repeat %d is beyond %d", r.Profile.Name, r.Profile.Repeat, MaxReplayRepeat)
	}
	return nil
}

// The bounds of a bundle's profile knobs beside MaxReplayDeadline.
const (
	MaxReplayGrace  = 2 * time.Minute
	MaxReplayRepeat = 1000
)

// SameCell reports why a bundle's cell.json and replay.json name
// different cells (a replay would run one and report the other), or nil.
func (b *Bundle) SameCell() error {
	if b.Replay == nil {
		return nil
	}
	c, r := b.Cell.Cell, b.Replay.Cell
	for _, f := range []struct{ name, a, b string }{
		{"scenario", c.Scenario, r.Scenario}, {"policy", c.Policy, r.Policy}, {"platform", c.Platform, r.Platform},
		{"python", c.Python, r.Python}, {"stderr", c.Buffering, r.Buffering}, {"variant", c.Variant, r.Variant}, {"backend", c.Backend, r.Backend},
	} {
		if f.a != "" && f.b != "" && f.a != f.b {
			return fmt.Errorf("%s says %s %q, %s says %q: not one cell", CellFile, f.name, clip(f.a), ReplayRecordFile, clip(f.b))
		}
	}
	return nil
}

// clip keeps an untrusted value short enough for one line of an error.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
