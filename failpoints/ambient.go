package failpoints

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pingcap/failpoint"

	"logjam/failpoints/envguard"
)

// ambient is this process's GO_FAILPOINTS, validated and enabled.
var ambient Set

// init does what pingcap/failpoint's init would have done with the
// GO_FAILPOINTS that envguard took aside, but refuses a malformed value,
// an unknown point or a term that does not fit its point with one line on
// stderr and exit status 2, before main. GO_FAILPOINTS_HTTP (a control
// server) is refused: nothing here may start a listener.
func init() {
	if err := enableAmbient(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s\n", filepath.Base(os.Args[0]), oneLine(err.Error()))
		os.Exit(2)
	}
}

func enableAmbient() error {
	if envguard.HTTPSet {
		return fmt.Errorf("%s=%q is not supported (accepted: unset; failpoints come only through %s)", envguard.HTTPVar, envguard.HTTPValue, envguard.Var)
	}
	if !envguard.Set {
		return nil
	}
	s, err := Parse(envguard.Value)
	if err != nil {
		return fmt.Errorf("%s=%q: %v", envguard.Var, envguard.Value, err)
	}
	for _, t := range s {
		if err := failpoint.Enable(t.Name, t.Terms); err != nil {
			return fmt.Errorf("%s=%q: %v", envguard.Var, envguard.Value, err)
		}
	}
	ambient = s
	// Children started with os.Environ() see what this process saw.
	return os.Setenv(envguard.Var, envguard.Value)
}

// Ambient is the GO_FAILPOINTS this process started with, validated and
// enabled (nil when unset).
func Ambient() Set { return ambient }

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
