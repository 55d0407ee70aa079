package cell

import (
	"sync"
	"syscall"

	"logjam/telemetry"
	"logjam/watchdog"
)

// signaller sends the child real signals at synchronized moments: the child
// reports its pid in its "start" event and asks with a MarkSIGINT mark
// (after it has set up whatever must be in flight when the signal lands).
type signaller struct {
	mu   sync.Mutex
	pid  int
	sent int
}

func (s *signaller) onEvent(ev watchdog.Event) {
	if st, ok := telemetry.As[telemetry.Start](ev); ok {
		s.mu.Lock()
		s.pid = st.Pid
		s.mu.Unlock()
		return
	}
	if m, ok := telemetry.As[telemetry.Mark](ev); !ok || m.Name != telemetry.MarkSIGINT {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid > 1 {
		_ = syscall.Kill(s.pid, syscall.SIGINT)
		s.sent++
	}
}

// Sent is how many SIGINTs reached kill(2).
func (s *signaller) Sent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}
