package report

import (
	"regexp"
	"sync"
)

// lazyRegexp is expr compiled on first use. A bounded repetition such as
// {0,511} compiles to that many copies: compiled at initialisation, this
// package's expressions cost every suite process about 0.9 MB and a few
// milliseconds, and few of them ever validate a foreign file.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
