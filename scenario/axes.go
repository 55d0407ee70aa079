package scenario

// Policies are the six log-sink policies, in the order of the seed's
// history (the original, the three review rounds, the PR as merged, ours):
// the matrix's columns, the suites' rows, the report's column order.
var Policies = []string{"pystderr", "fd2", "buffered", "adaptive", "merged", "logjam"}

// LazyVariants are the lazy-init variants, oldest first (SCENARIOS.md): the
// lazyinit family's columns.
var LazyVariants = []string{"old", "initfast", "norace", "fixed"}

// Columns is the order of every matrix column: the policies, then the
// lazy-init variants.
func Columns() []string { return append(append([]string(nil), Policies...), LazyVariants...) }
