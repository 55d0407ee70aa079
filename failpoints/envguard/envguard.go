// Package envguard takes GO_FAILPOINTS and GO_FAILPOINTS_HTTP out of the
// environment before pingcap/failpoint's init reads them. That init exits 1
// on a malformed value, with its text on stdout, before main; package
// failpoints validates the value instead and refuses it with one line and
// exit status 2.
//
// It works because Go (1.21 and later) initializes packages in import-path
// order among those whose imports are initialized: this package imports
// only syscall, so it is ready before os, and "logjam/..." sorts before
// "os"; pingcap/failpoint imports os, so it runs later. envguard_test.go
// checks the order with GODEBUG=inittrace=1. Import nothing else here.
package envguard

import "syscall"

// Names of the variables taken aside.
const (
	Var     = "GO_FAILPOINTS"
	HTTPVar = "GO_FAILPOINTS_HTTP"
)

// The values found at start, and whether each was set.
var (
	Value, HTTPValue string
	Set, HTTPSet     bool
)

func init() {
	Value, Set = take(Var)
	HTTPValue, HTTPSet = take(HTTPVar)
}

func take(name string) (string, bool) {
	v, ok := syscall.Getenv(name)
	if ok {
		_ = syscall.Unsetenv(name)
	}
	return v, ok
}
