package failpoints

import (
	"sync"

	"github.com/pingcap/failpoint"
)

// On reports whether a flag point fires now.
func On(name string) bool {
	v, err := failpoint.Eval(name)
	if err != nil {
		return false
	}
	switch b := v.(type) {
	case bool:
		return b
	case struct{}:
		return true
	}
	return v != nil
}

// Int is the value of an Int point that fires now.
func Int(name string) (int, bool) {
	v, err := failpoint.Eval(name)
	if err != nil {
		return 0, false
	}
	n, ok := v.(int)
	return n, ok
}

// String is the value of a Choice point that fires now.
func String(name string) (string, bool) {
	v, err := failpoint.Eval(name)
	if err != nil {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// Hit runs a Hook point: the in-process hook if one is registered, and the
// terms (a sleep) if the point was enabled with terms.
func Hit(name string, args ...any) {
	// Call evaluates the terms first (a sleep happens there), then runs
	// the hook registered by EnableHook, if any.
	failpoint.Call(name, args...)
}

// Scope enables failpoints and guarantees none outlives it: Close disables
// every one it enabled (tikv fail-rs's FailScenario; use with DeferCleanup).
type Scope struct {
	mu      sync.Mutex
	enabled []string
}

// NewScope returns an empty scope.
func NewScope() *Scope { return &Scope{} }

// Enable validates and enables terms on a catalogued point.
func (s *Scope) Enable(name, terms string) error {
	if err := ValidateTerm(name, terms); err != nil {
		return err
	}
	if err := failpoint.Enable(name, terms); err != nil {
		return err
	}
	s.add(name)
	return nil
}

// EnableHook registers fn to run at a Hook point.
func (s *Scope) EnableHook(name string, fn any) error {
	if _, ok := Lookup(name); !ok {
		return ValidateTerm(name, "off")
	}
	if err := failpoint.EnableCall(name, fn); err != nil {
		return err
	}
	s.add(name)
	return nil
}

func (s *Scope) add(name string) {
	s.mu.Lock()
	s.enabled = append(s.enabled, name)
	s.mu.Unlock()
}

// Close disables every point the scope enabled; safe to call twice.
func (s *Scope) Close() {
	s.mu.Lock()
	names := s.enabled
	s.enabled = nil
	s.mu.Unlock()
	for _, n := range names {
		_ = failpoint.Disable(n)
	}
}
