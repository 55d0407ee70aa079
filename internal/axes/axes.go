// Package axes names the matrix's columns: the six log-sink policies and the
// lazy-init variants, and the two kinds of random schedule they belong to. It is a leaf, so the child (sim) and the parent
// (scenario, the reports) share the names without importing each other.
package axes

// Policies are the six log-sink policies, in the order of the seed's
// history (the original, the three review rounds, the PR as merged, ours):
// the matrix's columns, the suites' rows, the report's column order.
var Policies = []string{"pystderr", "fd2", "buffered", "adaptive", "merged", "logjam"}

// LazyVariants are the lazy-init variants, oldest first (docs/SCENARIOS.md):
// the lazyinit suite's columns.
var LazyVariants = []string{"old", "initfast", "norace", "fixed"}

// Columns is the order of every matrix column: the policies, then the
// lazy-init variants.
func Columns() []string { return append(append([]string(nil), Policies...), LazyVariants...) }

// The kinds of random schedule (package schedule): a sink schedule runs
// under a policy, a lazyinit one under a lazy-init variant.
const (
	KindSink     = "sink"
	KindLazyInit = "lazyinit"
)

// Kinds lists them.
var Kinds = []string{KindSink, KindLazyInit}
