package watchdog

import "logjam/telemetry"

// Event is one telemetry line from the child (see package telemetry).
type Event = telemetry.Event

// The kinds the watchdog acts on.
const (
	KindCycle     = telemetry.KindCycle
	KindDump      = telemetry.KindDump
	KindMark      = telemetry.KindMark
	KindMalformed = telemetry.KindMalformed
)

// TelemetryFDEnv names the environment variable through which Run tells
// the child which descriptor is the telemetry pipe.
const TelemetryFDEnv = telemetry.FDEnv
