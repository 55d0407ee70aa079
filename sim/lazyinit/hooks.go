package lazyinit

import (
	"github.com/pingcap/failpoint"

	"logjam/failpoints"
)

// Injection points of the lazy-init model (Hook kind: in-process functions,
// run through failpoints.Hit); failpoints.Catalogue describes them.
const (
	PointBeforeLock = failpoints.LazyBeforeLock
	PointSwitch     = failpoints.LazySwitch
)

// EnableHook registers fn at one of this package's points in scope and
// returns the function that disables it early (scope.Close disables it too).
func EnableHook(scope *failpoints.Scope, name string, fn any) (disable func(), err error) {
	if err := scope.EnableHook(name, fn); err != nil {
		return nil, err
	}
	return func() { _ = failpoint.Disable(name) }, nil
}
