package lazyinit

import (
	"fmt"
	"strings"

	"logjam/internal/axes"
)

// Backend is a device family with its own lazy-init state.
type Backend string

// The backends. XPU and MTIA kept the old shape of the CUDA code; the model
// gives all three the same state machine (the seed: similar structure, no
// runtime deadlock established for XPU or MTIA).
const (
	CUDA Backend = "cuda"
	XPU  Backend = "xpu"
	MTIA Backend = "mtia"
)

// Backends lists the accepted backends.
var Backends = []Backend{CUDA, XPU, MTIA}

// Variant is one version of `_lazy_call`.
type Variant string

// The variants of docs/SCENARIOS.md.
const (
	// Old: queue-or-run entirely under the non-reentrant lock.
	Old Variant = "old"
	// InitFast: runs the callback outside the lock when initialized,
	// otherwise the old body under the lock.
	InitFast Variant = "initfast"
	// NoRace: InitFast, plus run at once when this thread is draining the
	// queue; otherwise queue under the lock without re-checking.
	NoRace Variant = "norace"
	// Fixed: fast paths (initialized, or this thread initializing), then
	// under the lock only run_now := initialized, else queue; the callback
	// runs after the lock is released (PyTorch #182948).
	Fixed Variant = "fixed"
)

// Variants lists the accepted variants.
var Variants = func() []Variant {
	var vs []Variant
	for _, v := range axes.LazyVariants {
		vs = append(vs, Variant(v))
	}
	return vs
}()

// ParseBackend validates a -backend value.
func ParseBackend(s string) (Backend, error) {
	for _, b := range Backends {
		if string(b) == s {
			return b, nil
		}
	}
	return "", fmt.Errorf("unknown backend %q (accepted: %s)", s, join(Backends))
}

// ParseVariant validates a -variant value.
func ParseVariant(s string) (Variant, error) {
	for _, v := range Variants {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown variant %q (accepted: %s)", s, join(Variants))
}

func join[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// Kind is how `_lazy_call` was asked to queue a callback.
type Kind int

// The kinds: `_lazy_call(cb)`, `_lazy_call(cb, seed=True)` (manual_seed) and
// `_lazy_call(cb, seed_all=True)` (manual_seed_all).
const (
	Plain Kind = iota
	Seed
	SeedAll
)

func (k Kind) String() string {
	switch k {
	case Seed:
		return "seed"
	case SeedAll:
		return "seed_all"
	}
	return "plain"
}
