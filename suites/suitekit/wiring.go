package suitekit

import (
	"fmt"
	"os"
	"strconv"

	"logjam/failpoints"
)

// checkEnvironment refuses what logjam chaos (or a person) may put in a
// suite's environment besides the profile's knobs: an ambient GO_FAILPOINTS
// (each cell sets its own and would drop it), a LOGJAM_SIMRT that is not an
// executable file, a LOGJAM_REPEAT that is not a whole number of at least 1.
func checkEnvironment() error {
	if fps := failpoints.Ambient(); fps != nil {
		return fmt.Errorf("GO_FAILPOINTS=%q would apply to no cell: each cell sets its own (accepted: unset)", fps.Env())
	}
	if bin, ok := os.LookupEnv("LOGJAM_SIMRT"); ok {
		st, err := os.Stat(bin)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("LOGJAM_SIMRT=%q is not an executable file (accepted: unset, and simrt is built here, or the simrt logjam chaos built)", bin)
		}
	}
	if s, ok := os.LookupEnv("LOGJAM_REPEAT"); ok {
		if n, err := strconv.Atoi(s); err != nil || n < 1 {
			return fmt.Errorf("LOGJAM_REPEAT=%q is not a whole number of at least 1 (accepted: unset, or the repeat logjam chaos runs)", s)
		}
	}
	return nil
}
