// Package schedule is a random fault schedule: one value, drawn from a seed
// by pgregory.net/rapid generators (package gen), that says which faults the
// child plays, where and how big. It is plain data (JSON, and base64 of the
// JSON on a command line): the child (simrt -scenario R) plays it, the
// parent arranges fd 2 and signals from it, and the ledger judges the run
// as it judges any matrix cell. docs/CONTRACT.md says which schedules lie
// inside logjam's promise; the generator draws only those.
package schedule

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"logjam/internal/artifact"
	"logjam/internal/axes"
)

// The kinds of schedule: what a schedule scripts (internal/axes).
const (
	KindSink     = axes.KindSink     // the log path: fd 2, sys.stderr, threads, signals, aborts, exit
	KindLazyInit = axes.KindLazyInit // the lazy device initialization
)

// Kinds lists them.
var Kinds = axes.Kinds

// Schedule is one random run.
type Schedule struct {
	Kind string `json:"kind"`
	// Policy is the log sink policy of a sink schedule, Variant the
	// lazy-init variant of a lazyinit one: a schedule names one of them
	// (Column).
	Policy   string `json:"policy,omitempty"`
	Variant  string `json:"variant,omitempty"`
	Platform string `json:"platform"`
	Python   string `json:"python"`
	// Buffering is how Python opened sys.stderr: "" (buffered) or
	// "unbuffered" (python -u, PYTHONUNBUFFERED=1).
	Buffering string `json:"buffering,omitempty"`
	Sink      *Sink  `json:"sink,omitempty"`
	Lazy      *Lazy  `json:"lazy,omitempty"`
	// OldFamily is read, never written: a schedule written before Kind
	// was named so says "family", and a lazyinit one its variant as
	// "policy"; Decode moves both (upgrade) so that an old replay string
	// still plays.
	OldFamily string `json:"family,omitempty"`
}

// Column is the matrix column the schedule runs under: its policy, or its
// lazy-init variant.
func (s Schedule) Column() string {
	if s.Kind == KindLazyInit {
		return s.Variant
	}
	return s.Policy
}

// upgrade moves an old schedule's "family" to Kind and its lazyinit
// "policy" to Variant; a schedule with both spellings is refused.
func (s *Schedule) upgrade() error {
	if s.OldFamily == "" {
		return nil
	}
	if s.Kind != "" {
		return fmt.Errorf("schedule: both kind %q and its old spelling family %q", s.Kind, s.OldFamily)
	}
	s.Kind, s.OldFamily = s.OldFamily, ""
	if s.Kind == KindLazyInit && s.Variant == "" {
		s.Variant, s.Policy = s.Policy, ""
	}
	return nil
}

// Encode is the schedule as one command-line word: base64 (URL alphabet,
// no padding) of its compact JSON.
func (s Schedule) Encode() string {
	return base64.RawURLEncoding.EncodeToString(s.JSON())
}

// JSON is the schedule's compact JSON.
func (s Schedule) JSON() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return b
}

// Decode reads a schedule from Encode's form or from its JSON (strict:
// internal/artifact.Decode), and validates it.
func Decode(raw string) (Schedule, error) {
	raw = strings.TrimSpace(raw)
	var b []byte
	if strings.HasPrefix(raw, "{") {
		b = []byte(raw)
	} else {
		var err error
		if b, err = base64.RawURLEncoding.DecodeString(raw); err != nil {
			return Schedule{}, fmt.Errorf("schedule: neither JSON nor base64 of JSON: %v", err)
		}
	}
	var s Schedule
	if err := artifact.Decode(b, &s); err != nil { // strict JSON: internal/artifact's rules
		return Schedule{}, fmt.Errorf("schedule: %v", err)
	}
	if err := s.upgrade(); err != nil {
		return Schedule{}, err
	}
	if err := s.Validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// Policies and variants a schedule may name (the matrix's own lists).
var (
	SinkPolicies = axes.Policies
	LazyVariants = axes.LazyVariants
	LazyBackends = []string{"cuda", "xpu", "mtia"}
)

// Validate checks the schedule's shape and bounds; a schedule that passes
// can be played.
func (s Schedule) Validate() error {
	bad := func(format string, args ...any) error { return fmt.Errorf("schedule: "+format, args...) }
	if err := s.validateRuntime(); err != nil {
		return bad("%w", err)
	}
	if s.OldFamily != "" {
		return bad("family %q: the old spelling of kind, read only by Decode", s.OldFamily)
	}
	switch s.Kind {
	case KindSink:
		if !slices.Contains(SinkPolicies, s.Policy) {
			return bad("policy %q (accepted: %s)", s.Policy, strings.Join(SinkPolicies, ", "))
		}
		if s.Variant != "" {
			return bad("a sink schedule names a policy, not variant %q", s.Variant)
		}
		if s.Sink == nil || s.Lazy != nil {
			return bad("a sink schedule has a sink part and no lazy part")
		}
		// The threads first: the other axes' rules name threads and calls.
		for _, a := range Axes {
			if err := a.Validate(s.Sink); err != nil {
				return bad("%w", err)
			}
		}
		return nil
	case KindLazyInit:
		if !slices.Contains(LazyVariants, s.Variant) {
			return bad("variant %q (accepted: %s)", s.Variant, strings.Join(LazyVariants, ", "))
		}
		if s.Policy != "" {
			return bad("a lazyinit schedule names a variant, not policy %q", s.Policy)
		}
		if s.Lazy == nil || s.Sink != nil {
			return bad("a lazyinit schedule has a lazy part and no sink part")
		}
		return s.Lazy.validate()
	}
	return bad("kind %q (accepted: %s)", s.Kind, strings.Join(Kinds, ", "))
}

// Lines is how many lines the schedule's calls log (daemons aside).
func (s Schedule) Lines() int {
	if s.Sink == nil {
		return 0
	}
	n := 0
	s.Sink.eachLines(func(lines, _ int) { n += lines })
	if s.Sink.Abort != nil {
		n += s.Sink.Abort.After
	}
	return n
}

// MessageBytes is how many message bytes the threads log, in calls and
// outside them (daemons and the lines after an abort aside).
func (s Schedule) MessageBytes() int {
	if s.Sink == nil {
		return 0
	}
	n := 0
	s.Sink.eachLines(func(lines, size int) { n += lines * size })
	return n
}

// eachLines calls fn with each run of lines the schedule logs, and their
// message size: every axis's that logs (lineRunner).
func (k *Sink) eachLines(fn func(lines, size int)) {
	for _, a := range Axes {
		if lr, ok := a.(lineRunner); ok {
			lr.lineRuns(k, fn)
		}
	}
}
