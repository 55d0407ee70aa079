package config

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"logjam/internal/axes"
)

// Random are the knobs of the random family (suites/random).
type Random struct {
	// Runs: random schedules the suite plays (0: none).
	Runs int `yaml:"runs"`
	// Seed of the first run (run i has Seed+i); 0 picks one and prints it.
	Seed uint64 `yaml:"seed"`
	// Kind of schedule: sink, lazyinit, or "" for both (axes.Kinds).
	Kind string `yaml:"kind"`
	// Policies the runs draw from (sink policies and lazy-init variants,
	// axes.Columns); logjam's and fixed's runs must be OK, the others'
	// must replay alike.
	Policies []string `yaml:"policies"`
	// Rows: which columns of the row-schedule replays (suites/random,
	// rows_test.go) run: "all" (or empty) every policy of each row, "own"
	// only logjam's and fixed's, the columns that must be OK
	// (LOGJAM_RANDOM_ROWS overrides).
	Rows string `yaml:"rows" json:",omitempty"`
	// OldFamily is read, never written: a bundle's profile written before
	// Kind was named so says "Family" (Profile.Upgrade moves it).
	OldFamily string `yaml:"-" json:"Family,omitempty"`
}

// RowsAll and RowsOwn are Rows' values.
const (
	RowsAll = "all"
	RowsOwn = "own"
)

// OwnRowsOnly: only logjam's and fixed's row-schedule replays run.
func (r Random) OwnRowsOnly() bool { return r.Rows == RowsOwn }

// fromEnv applies LOGJAM_RANDOM_RUNS, LOGJAM_RANDOM_SEED and
// LOGJAM_RANDOM_ROWS.
func (r *Random) fromEnv() error {
	if s, ok := os.LookupEnv("LOGJAM_RANDOM_ROWS"); ok && s != "" {
		if s != RowsAll && s != RowsOwn {
			return fmt.Errorf("LOGJAM_RANDOM_ROWS=%q (accepted: %s, %s)", s, RowsAll, RowsOwn)
		}
		r.Rows = s
	}
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
	if r.Kind != "" && !slices.Contains(axes.Kinds, r.Kind) {
		return bad(fmt.Sprintf("kind %q (accepted: %s, or empty for both)", r.Kind, strings.Join(axes.Kinds, ", ")))
	}
	if r.Rows != "" && r.Rows != RowsAll && r.Rows != RowsOwn {
		return bad(fmt.Sprintf("rows %q (accepted: %s, %s)", r.Rows, RowsAll, RowsOwn))
	}
	if r.OldFamily != "" {
		return bad(fmt.Sprintf("Family %q: the old spelling of kind, read only from a bundle", r.OldFamily))
	}
	for _, p := range r.Policies {
		if !slices.Contains(axes.Columns(), p) {
			return bad(fmt.Sprintf("policy %q (accepted: %s)", p, strings.Join(axes.Columns(), ", ")))
		}
	}
	return nil
}
