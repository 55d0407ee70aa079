package schedule

import (
	"fmt"
	"slices"
	"strings"
)

// Filter narrows what the generator (package gen) draws: empty leaves an axis free.
type Filter struct {
	Family string
	// Policies: sink policies and lazy-init variants to draw from.
	Policies []string
}

// Check refuses a filter that leaves nothing to draw.
func (f Filter) Check() error {
	for _, p := range f.Policies {
		in := slices.Contains(SinkPolicies, p) && f.Family != FamilyLazyInit || slices.Contains(LazyVariants, p) && f.Family != FamilySink
		if !in {
			return fmt.Errorf("policy %q is not a policy or variant of family %q (accepted: %s, %s)", p, f.Family, strings.Join(SinkPolicies, ", "), strings.Join(LazyVariants, ", "))
		}
	}
	if f.Family != "" && !slices.Contains(Families, f.Family) {
		return fmt.Errorf("family %q (accepted: %s)", f.Family, strings.Join(Families, ", "))
	}
	return nil
}
