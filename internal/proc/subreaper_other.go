//go:build !linux

package proc

// BecomeSubreaper does nothing outside Linux: there is no child
// subreaper.
func BecomeSubreaper() error { return nil }
