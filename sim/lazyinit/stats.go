package lazyinit

import (
	"sync"
	"sync/atomic"
)

// The paths by which a callback runs (telemetry "path", Stats.Paths).
const (
	PathUnderLock    = "under the lock"                // old and initfast, initialized: the deadlock's shape
	PathInitialized  = "initialized fast path"         // outside the lock
	PathInitializing = "initializing-thread fast path" // the draining thread re-entering
	PathRunNow       = "run_now after the lock"        // fixed: initialization won the race
	PathDrained      = "drained by _lazy_init"         // queued, run by the drain
)

// Stats is what ran: for tests and for the programs' printout.
type Stats struct {
	Submitted  int // callbacks handed to _lazy_call
	Queued     int // of those, queued (not run at once)
	Ran        int // distinct callbacks that ran
	Runs       int // runs in all (a callback run twice counts twice)
	Superseded int // seed callbacks replaced by a later one before the drain
	Twice      []string
	Lost       []string       // submitted, never ran, not superseded
	Paths      map[string]int // runs by the path that ran them (PathRunNow, ...)
}

type stats struct {
	mu         sync.Mutex
	order      []string
	runs       map[string]int
	paths      map[string]int
	superseded map[string]bool
	queued     atomic.Int64
}

func (s *stats) submitted(cb *Callback) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[cb.ID]; !ok {
		s.runs[cb.ID] = 0
		s.order = append(s.order, cb.ID)
	}
}

func (s *stats) ran(cb *Callback, path string) {
	s.mu.Lock()
	s.runs[cb.ID]++
	if s.paths == nil {
		s.paths = map[string]int{}
	}
	s.paths[path]++
	s.mu.Unlock()
}

func (s *stats) supersede(cb *Callback) {
	s.mu.Lock()
	s.superseded[cb.ID] = true
	s.mu.Unlock()
}

// Stats returns the callbacks' bookkeeping so far.
func (m *Machine) Stats() Stats {
	s := &m.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Submitted: len(s.order), Queued: int(s.queued.Load()), Paths: map[string]int{}}
	for p, n := range s.paths {
		st.Paths[p] = n
	}
	for _, id := range s.order {
		n := s.runs[id]
		st.Runs += n
		switch {
		case n > 1:
			st.Twice = append(st.Twice, id)
			st.Ran++
		case n == 1:
			st.Ran++
		case s.superseded[id]:
			st.Superseded++
		default:
			st.Lost = append(st.Lost, id)
		}
	}
	return st
}
