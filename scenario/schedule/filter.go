package schedule

import (
	"fmt"
	"slices"
	"strings"
)

// Filter narrows what the generator (package gen) draws: empty leaves an axis free.
type Filter struct {
	Kind string
	// Policies: sink policies and lazy-init variants to draw from.
	Policies []string
}

// Check refuses a filter that leaves nothing to draw.
func (f Filter) Check() error {
	for _, p := range f.Policies {
		in := slices.Contains(SinkPolicies, p) && f.Kind != KindLazyInit || slices.Contains(LazyVariants, p) && f.Kind != KindSink
		if !in {
			return fmt.Errorf("policy %q is not a policy or variant of kind %q (accepted: %s, %s)", p, f.Kind, strings.Join(SinkPolicies, ", "), strings.Join(LazyVariants, ", "))
		}
	}
	if f.Kind != "" && !slices.Contains(Kinds, f.Kind) {
		return fmt.Errorf("kind %q (accepted: %s)", f.Kind, strings.Join(Kinds, ", "))
	}
	return nil
}
