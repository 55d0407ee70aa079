package policy

import (
	"logjam/daemon"
	"logjam/sim"
)

// mergedRules make adaptiveSink the PR as merged: the daemon rule by
// platform and Python version (daemon.Unwinds), the kept lines written
// before a fatal line while there is room, the whole exception message
// escaped, and the macOS small-pipe rule in the room check.
var mergedRules = adaptiveRules{
	name:         "merged",
	daemonDirect: func(in *sim.Interp) bool { return daemon.Unwinds(string(in.Platform), in.Python.Hex()) },
	fatalContext: true,
	escapeAll:    true,
	careful:      true,
}
