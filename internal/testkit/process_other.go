//go:build !linux

package testkit

// Without /proc (outside Linux) these are what the tests' own copies
// were: no subreaper, no zombie told apart, nothing found by tag.

// BecomeSubreaper does nothing: there is no child subreaper.
func BecomeSubreaper() error { return nil }

// IsZombie cannot tell: false.
func IsZombie(pid int) bool { return false }

// Gone has no /proc to look in: every process counts as gone.
func Gone(pid int) bool { return true }

// Tagged finds nothing.
func Tagged(tag string) []string { return nil }
