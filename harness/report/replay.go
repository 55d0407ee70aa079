package report

import (
	"time"

	"logjam/internal/config"
	"logjam/scenario"
)

// Replay is what a replay needs to run a bundle's cell again exactly: the
// cell's own parameters (the child's flags, its failpoints, its deadline),
// the profile's knobs, and the child binary by digest (childbin), with the
// module it was built from for a rebuild. The fd-2 arrangement, the signals
// and SIGINT's disposition at start follow from the scenario's contract.
type Replay struct {
	scenario.Cell
	Failpoints string         `json:"failpoints,omitempty"`  // GO_FAILPOINTS
	Schedule   string         `json:"schedule,omitempty"`    // scenario R's random schedule
	Deadline   time.Duration  `json:"deadline_ns,omitempty"` // the cell's own, before scaling; 0: the profile's
	Profile    config.Profile `json:"profile"`
	Binary     string         `json:"binary_sha256"`
	Module     string         `json:"module,omitempty"`
}

// ReplayRecordFile is the bundle file that holds its Replay.
const ReplayRecordFile = "replay.json"
