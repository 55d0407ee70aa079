package lazyinit

import (
	"fmt"

	"logjam/sim"
)

// The RNG functions of torch/<backend>/random.py: each builds a callback that
// touches the default generator and submits it through _lazy_call, which is
// how a callback re-enters _lazy_call through an ordinary API (the seed's
// set_rng_state and manual_seed routes). The generator is one number: the
// last state or seed applied.

// CurrentDevice is current_device(): it initializes lazily first.
func (m *Machine) CurrentDevice(t *sim.Thread) int {
	m.LazyInit(t)
	return 0
}

// GetRNGState is get_rng_state(): `_lazy_init()`, then the generator's state.
func (m *Machine) GetRNGState(t *sim.Thread) int64 {
	m.LazyInit(t)
	return m.generator.Load()
}

// SetRNGState is set_rng_state(new_state): `_lazy_call(cb)` with a cb that
// sets the default generator's state. It returns the callback submitted.
func (m *Machine) SetRNGState(t *sim.Thread, state int64) *Callback {
	cb := m.NewCallback(fmt.Sprintf("set_rng_state(%d).cb", state), func(t *sim.Thread) {
		m.CurrentDevice(t)
		m.generator.Store(state)
	})
	m.LazyCall(t, cb, Plain)
	return cb
}

// ManualSeed is manual_seed(seed): `_lazy_call(cb, seed=True)` with a cb
// that calls current_device() and seeds the default generator.
func (m *Machine) ManualSeed(t *sim.Thread, seed int64) *Callback {
	cb := m.NewCallback(fmt.Sprintf("manual_seed(%d).cb", seed), func(t *sim.Thread) {
		m.CurrentDevice(t)
		m.generator.Store(seed)
	})
	m.LazyCall(t, cb, Seed)
	return cb
}

// ManualSeedAll is manual_seed_all(seed): `_lazy_call(cb, seed_all=True)`
// with a cb that seeds every device's generator (one device here).
func (m *Machine) ManualSeedAll(t *sim.Thread, seed int64) *Callback {
	cb := m.NewCallback(fmt.Sprintf("manual_seed_all(%d).cb", seed), func(t *sim.Thread) {
		m.generator.Store(seed)
	})
	m.LazyCall(t, cb, SeedAll)
	return cb
}

// Generator is the default generator's state (for printouts and tests).
func (m *Machine) Generator() int64 { return m.generator.Load() }
