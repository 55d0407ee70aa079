//go:build !linux

package runner

// becomeSubreaper: no child subreaper outside Linux; the group kill is all.
func becomeSubreaper() {}

// killLeftovers: nothing to adopt outside Linux.
func killLeftovers() []string { return nil }
