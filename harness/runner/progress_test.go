package runner

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"logjam/verdict"
)

// What the suites send (SendProgress, through the file logjam chaos
// follows) becomes a line per cell with -v; without it, off a terminal,
// only the cells not as expected and a closing count.
func TestCellProgressFollowsWhatTheSuitesSend(t *testing.T) {
	events := []ProgressEvent{
		{Family: "deadlock", Specs: 2},
		{Family: "capture", Specs: 3},
		{Family: "capture", Dropped: 1}, // another shard's
		{Family: "deadlock", Spec: "D1 a", Cells: []CellProgress{{Label: "D1 [pystderr]", Expected: verdict.Hang, Observed: verdict.Hang, Matches: true}}},
		{Family: "capture", Spec: "C1 a", Failed: true, Cells: []CellProgress{{Label: "C1 [fd2]", Expected: verdict.OK, Observed: verdict.Misrouted}}},
		{Family: "deadlock", Spec: "D2 a", Failed: true, Cells: []CellProgress{{Label: "D2 [fd2]", Expected: verdict.OK, Observed: verdict.OK, Matches: true}}},
		{Family: "capture", Spec: "R seed=1"},
	}
	run := func(verbose bool) string {
		path := filepath.Join(t.TempDir(), "progress.jsonl")
		t.Setenv(ProgressEnv, path)
		var out bytes.Buffer
		p := newCellProgress(&out, verbose, 1)
		stop := make(chan struct{})
		followed := followProgress(path, p, stop)
		for _, ev := range events {
			SendProgress(ev)
		}
		close(stop)
		<-followed
		p.end()
		return out.String()
	}
	g := NewWithT(t)
	g.Expect(run(true)).To(Equal(`logjam: [1/4] deadlock D1 [pystderr] HANG as expected
logjam: [2/4] capture C1 [fd2] MISROUTED, expected OK: NOT as expected
logjam: [3/4] deadlock D2 [fd2] OK as expected, but another check of its spec FAILED
logjam: [4/4] capture R seed=1: passed
`))
	g.Expect(run(false)).To(Equal(`logjam: [2/4] capture C1 [fd2] MISROUTED, expected OK: NOT as expected
logjam: [3/4] deadlock D2 [fd2] OK as expected, but another check of its spec FAILED
logjam: [4/4] specs done (3 cells, 1 other specs), 2 not as expected
`))
}

// syncBuffer is a bytes.Buffer that a ticker's goroutine may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A build says it is still going, and says nothing once stopped.
func TestABuildIsNeverSilent(t *testing.T) {
	g := NewWithT(t)
	var out syncBuffer
	stop := tickBuild(&out, false, "the suites", 10*time.Millisecond)
	g.Eventually(out.String).Should(MatchRegexp(`^logjam: still building the suites: \d+ s so far\n`))
	stop()
	after := out.String()
	g.Consistently(out.String).WithTimeout(50 * time.Millisecond).Should(Equal(after))
}
