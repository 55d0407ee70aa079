package watchdog

import (
	"logjam/telemetry"
	"sync"
	"time"
)

// recorder keeps the telemetry in order and tells the watcher about cycles
// and dumps.
type recorder struct {
	started   time.Time
	onEvent   func(telemetry.Event)
	blocked   func(telemetry.Event) bool
	cycleSeen chan struct{} // closed at the first cycle
	// blockedSeen is closed at the first event blocked accepts.
	blockedSeen chan struct{}
	dumpSeen    chan struct{} // one token per dump, at most one pending

	mu      sync.Mutex
	events  []telemetry.Event
	cycle   int // index of the first cycle, -1 if none
	dump    int // index of the last dump, -1 if none
	cycleAt time.Duration
	// blockedAt is when blockedSeen closed (0: never).
	blockedAt time.Duration
}

func newRecorder(started time.Time, onEvent func(telemetry.Event), blocked func(telemetry.Event) bool) *recorder {
	return &recorder{
		started: started, onEvent: onEvent, blocked: blocked,
		cycleSeen: make(chan struct{}), dumpSeen: make(chan struct{}, 1), blockedSeen: make(chan struct{}),
		cycle: -1, dump: -1,
	}
}

func (r *recorder) add(ev telemetry.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	switch ev.Ev {
	case telemetry.KindCycle:
		if r.cycle < 0 {
			r.cycle, r.cycleAt = len(r.events)-1, time.Since(r.started)
			close(r.cycleSeen)
		}
	case telemetry.KindDump:
		r.dump = len(r.events) - 1
		select {
		case r.dumpSeen <- struct{}{}:
		default:
		}
	}
	if r.blocked != nil && r.blockedAt == 0 && r.blocked(ev) {
		r.blockedAt = max(time.Since(r.started), time.Nanosecond)
		close(r.blockedSeen)
	}
	r.mu.Unlock()
	if r.onEvent != nil {
		r.onEvent(ev)
	}
}

func (r *recorder) snapshot() (events []telemetry.Event, cycle, dump *telemetry.Event, cycleAt time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	events = append([]telemetry.Event(nil), r.events...)
	if r.cycle >= 0 {
		ev := events[r.cycle]
		cycle = &ev
	}
	if r.dump >= 0 {
		ev := events[r.dump]
		dump = &ev
	}
	return events, cycle, dump, r.cycleAt
}

// blockedWhen is when the child said it can only wait (0: it never did).
func (r *recorder) blockedWhen() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.blockedAt
}
