package schedule

import (
	"fmt"
	"slices"
	"strings"

	"logjam/scenario"
)

// Lazy is a script against one lazy-init backend.
type Lazy struct {
	Backend string `json:"backend"`
	// Race: first, the L3 race (thread A passes the fast-path checks and
	// pauses before the lock; B initializes and drains).
	Race bool `json:"race,omitempty"`
	// Ops are the main thread's calls, in order; an init() always follows.
	Ops []string `json:"ops"`
}

// The lazy-init operations.
const (
	OpCall      = "call"          // _lazy_call(cb)
	OpCallRNG   = "call-set-rng"  // _lazy_call(lambda: set_rng_state(s)): the callback re-enters
	OpCallSeed  = "call-seed"     // _lazy_call(lambda: manual_seed(42)): the callback re-enters
	OpInit      = "init"          // init()
	OpGetRNG    = "get-rng-state" // get_rng_state(): initializes lazily
	lazyRaceCBs = 3               // the race: one queued before it, A's lambda, set_rng_state's callback
)

// Callbacks is how many callbacks the lazy script submits, each of which
// must run once.
func (l *Lazy) Callbacks() int {
	n := 0
	if l.Race {
		n += lazyRaceCBs
	}
	for _, op := range l.Ops {
		switch op {
		case OpCall:
			n++
		case OpCallRNG, OpCallSeed:
			n += 2
		}
	}
	return n
}

func (l *Lazy) validate() error {
	if !slices.Contains(LazyBackends, l.Backend) {
		return fmt.Errorf("schedule: lazy backend %q (accepted: %s)", l.Backend, strings.Join(LazyBackends, ", "))
	}
	if len(l.Ops) > 8 {
		return fmt.Errorf("schedule: %d lazy ops (accepted: up to 8)", len(l.Ops))
	}
	for _, op := range l.Ops {
		if !slices.Contains([]string{OpCall, OpCallRNG, OpCallSeed, OpInit, OpGetRNG}, op) {
			return fmt.Errorf("schedule: lazy op %q (accepted: call, call-set-rng, call-seed, init, get-rng-state)", op)
		}
	}
	return nil
}

// faults counts a lazy script's faults: its ops and its race.
func (l *Lazy) faults() int { return len(l.Ops) + b2i(l.Race) }

// steps are a lazy script's shrink steps: no race, then each op removed.
func (l *Lazy) steps() []Step {
	steps := []Step{change(PhasePart, "no race", func(c *Schedule) { c.Lazy.Race = false })}
	for i := range l.Ops {
		steps = append(steps, change(PhasePart, fmt.Sprintf("op %d", i), func(c *Schedule) { c.Lazy.Ops = append(c.Lazy.Ops[:i:i], c.Lazy.Ops[i+1:]...) }))
	}
	return steps
}

// lazyOps are the operations a lazy-init script draws from, in the order
// rapid shrinks toward.
var lazyOps = []string{OpCall, OpInit, OpCallRNG, OpCallSeed, OpGetRNG}

// DrawLazy draws a lazy-init schedule of one of variants: a backend,
// maybe the race, up to five operations.
func DrawLazy(d Drawer, variants []string) Schedule {
	variant := pick(d, variants, "variant")
	l := &Lazy{
		Backend: pick(d, LazyBackends, "backend"),
		Race:    d.Bool("race"),
	}
	is := d.Indexes(len(lazyOps), 0, 5, "ops")
	l.Ops = make([]string, len(is)) // none is [] in the JSON, as always
	for j, i := range is {
		l.Ops[j] = lazyOps[i]
	}
	return Schedule{Kind: KindLazyInit, Variant: variant, Platform: scenario.DefaultPlatform, Python: scenario.DefaultPython, Lazy: l}
}
