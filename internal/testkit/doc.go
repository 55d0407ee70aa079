// Package testkit holds what the module's tests share, one noun a file:
// the child binary built once per test binary (child.go), os.Stderr
// captured while a function runs (stderr.go), the module's root and a copy
// of its tree (module.go), and processes: becoming a subreaper, telling a
// zombie, finding what a run started by a tag in its environment
// (process_linux.go, process_other.go).
//
// Only tests import it (it takes a testing.TB); product code that needs
// one of these uses the package underneath (internal/childbin,
// internal/proc).
package testkit
