package calibrate_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"logjam/internal/claim"
	"logjam/internal/cpuslot"
	"logjam/internal/shard"
)

// Cells played ahead. A real cell mostly waits (for its interpreter's
// barriers, a paced delegate, a hang's confirmation), so the suite plays
// the cells it will report side by side: before the specs run, the specs
// that will run are previewed (Ginkgo's PreviewSpecs: the label filter,
// focus and skips applied), and from the first spec on, a dispatcher plays
// their cells in the order they will be reported, at most
// childrenAtATime() at once. A spec then reports its cell's result (waiting
// for it if need be) as it would have played it itself. Children that
// compute hold one of the cores' CPU slots (cpuslot, as logjam chaos
// serves them): a simulated cell while its child computes (cell.Run), a
// real one until the wait state shows every thread of its interpreter
// asleep (calibrate.Run). Under Ginkgo's own parallel mode (-p), or when
// the preview fails, each spec plays its cell itself, as before.
//
// Knob: LOGJAM_CALIBRATE_J=N plays N cells at a time (1: one after another).

// play is a spec's work: what the spec body would do before it reports.
type play func(ctx context.Context) any

type aheadCell struct {
	done   chan struct{}
	result any
}

var ahead = struct {
	mu      sync.Mutex
	plays   map[string]play // by spec text, registered as the table is built
	planned []string        // the specs that will run, in order
	cells   map[string]*aheadCell
	once    sync.Once
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	slots   *cpuslot.Server
}{plays: map[string]play{}, cells: map[string]*aheadCell{}}

// childrenAtATime is how many cells the suite plays at once: four a core
// (a cell's children compute for about a third of its time: the
// interpreter's start and the simulated cell; they hold a CPU slot
// meanwhile, so the cores are never asked for more than they have), or
// LOGJAM_CALIBRATE_J.
func childrenAtATime() int {
	if n, err := strconv.Atoi(os.Getenv("LOGJAM_CALIBRATE_J")); err == nil && n >= 1 {
		return n
	}
	return 4 * runtime.NumCPU()
}

// register names the work of the spec whose text is name (called while the
// tree is built: DescribeTable's entries).
func register(name string, p play) {
	ahead.mu.Lock()
	defer ahead.mu.Unlock()
	ahead.plays[name] = p
}

// planAhead previews the suite (before RunSpecs) and keeps the specs that
// will run, in order; under Ginkgo's parallel mode, or a shard or claims
// (skips the preview cannot see: suitekit's BeforeEach), it plans nothing.
func planAhead(description string) {
	if suiteConfig, _ := ginkgo.GinkgoConfiguration(); suiteConfig.ParallelTotal > 1 || childrenAtATime() == 1 ||
		os.Getenv(shard.Env) != "" || os.Getenv(claim.Env) != "" {
		return
	}
	r := ginkgo.PreviewSpecs(description, ginkgo.Label(family))
	var names []string
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt && sr.State == types.SpecStatePassed {
			names = append(names, sr.LeafNodeText)
		}
	}
	ahead.mu.Lock()
	ahead.planned = names
	ahead.mu.Unlock()
}

// played is the result of the spec named name: played ahead when planned
// (waiting for it as long as ctx allows), else played now.
func played(ctx context.Context, name string) any {
	ahead.mu.Lock()
	p, ok := ahead.plays[name]
	planned := len(ahead.planned) > 0
	ahead.mu.Unlock()
	if !ok {
		ginkgo.Fail(fmt.Sprintf("no work registered for %q", name))
	}
	if planned {
		ahead.once.Do(startAhead)
		ahead.mu.Lock()
		c := ahead.cells[name]
		ahead.mu.Unlock()
		if c != nil {
			select {
			case <-c.done:
				return c.result
			case <-ctx.Done():
				return p(ctx) // interrupted: the spec's own play sees it at once
			}
		}
	}
	return p(ctx)
}

// startAhead starts the dispatcher (at the first spec: the suite's setup,
// which builds the simulated child, has run).
func startAhead() {
	ahead.ctx, ahead.cancel = context.WithCancel(context.Background())
	if os.Getenv(cpuslot.Env) == "" {
		if s, err := cpuslot.Serve(runtime.NumCPU()); err == nil {
			ahead.slots = s
			os.Setenv(cpuslot.Env, s.Addr)
		}
	}
	ahead.mu.Lock()
	var names []string // the planned specs that play a cell (the others play their own work)
	for _, n := range ahead.planned {
		if ahead.plays[n] != nil {
			names = append(names, n)
			ahead.cells[n] = &aheadCell{done: make(chan struct{})}
		}
	}
	ahead.mu.Unlock()
	children := make(chan struct{}, childrenAtATime())
	ahead.wg.Add(1)
	go func() {
		defer ahead.wg.Done()
		for _, n := range names {
			select {
			case children <- struct{}{}:
			case <-ahead.ctx.Done():
				return
			}
			ahead.mu.Lock()
			p, c := ahead.plays[n], ahead.cells[n]
			ahead.mu.Unlock()
			ahead.wg.Add(1)
			go func() {
				defer ahead.wg.Done()
				defer func() { <-children }()
				defer close(c.done)
				c.result = p(ahead.ctx)
			}()
		}
	}()
}

// stopAhead ends what is still playing (an interrupted suite) and waits
// for it: no child outlives the suite.
var _ = ginkgo.AfterSuite(func() {
	if ahead.cancel == nil {
		return
	}
	ahead.cancel()
	ahead.wg.Wait()
	if ahead.slots != nil {
		ahead.slots.Close()
		os.Unsetenv(cpuslot.Env)
	}
})
