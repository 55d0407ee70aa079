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
		switch {
		case in:
		case f.Kind == KindSink:
			return fmt.Errorf("policy %q is not a sink policy (accepted with -kind sink: %s)", p, strings.Join(SinkPolicies, ", "))
		case f.Kind == KindLazyInit:
			return fmt.Errorf("policy %q is not a lazy-init variant (accepted with -kind lazyinit: %s)", p, strings.Join(LazyVariants, ", "))
		default:
			return fmt.Errorf("policy %q is neither a sink policy nor a lazy-init variant (accepted: %s; %s)", p, strings.Join(SinkPolicies, ", "), strings.Join(LazyVariants, ", "))
		}
	}
	if f.Kind != "" && !slices.Contains(Kinds, f.Kind) {
		return fmt.Errorf("kind %q (accepted: %s)", f.Kind, strings.Join(Kinds, ", "))
	}
	return nil
}
