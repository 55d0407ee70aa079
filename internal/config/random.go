package config

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Random are the knobs of the random-schedule family (suites/random).
type Random struct {
	// Runs: random schedules the suite plays (0: none).
	Runs int `yaml:"runs"`
	// Seed of the first run (run i has Seed+i); 0 picks one and prints it.
	Seed uint64 `yaml:"seed"`
	// Family: sink, lazyinit, or "" for both.
	Family string `yaml:"family"`
	// Policies the runs draw from (sink policies and lazy-init variants);
	// logjam's and fixed's runs must be OK, the others' must replay alike.
	Policies []string `yaml:"policies"`
}

// The names the knobs accept (package schedule's, repeated here so that
// config stays a leaf).
var (
	randomFamilies = []string{"sink", "lazyinit"}
	randomPolicies = []string{"pystderr", "fd2", "buffered", "adaptive", "merged", "logjam", "old", "initfast", "norace", "fixed"}
)

// fromEnv applies LOGJAM_RANDOM_RUNS and LOGJAM_RANDOM_SEED.
func (r *Random) fromEnv() error {
	if s := os.Getenv("LOGJAM_RANDOM_RUNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("LOGJAM_RANDOM_RUNS=%q is not a whole number", s)
		}
		r.Runs = v
	}
	if s := os.Getenv("LOGJAM_RANDOM_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("LOGJAM_RANDOM_SEED=%q is not a whole number", s)
		}
		r.Seed = v
	}
	return nil
}

func (r Random) validate(path, profile string) error {
	bad := func(what string) error { return fmt.Errorf("%s: profile %s: random: %s", path, profile, what) }
	if r.Runs < 0 || r.Runs > 100000 {
		return bad(fmt.Sprintf("runs %d (accepted: 0 to 100000)", r.Runs))
	}
	if r.Family != "" && !slices.Contains(randomFamilies, r.Family) {
		return bad(fmt.Sprintf("family %q (accepted: %s, or empty for both)", r.Family, strings.Join(randomFamilies, ", ")))
	}
	for _, p := range r.Policies {
		if !slices.Contains(randomPolicies, p) {
			return bad(fmt.Sprintf("policy %q (accepted: %s)", p, strings.Join(randomPolicies, ", ")))
		}
	}
	return nil
}
