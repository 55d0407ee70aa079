// Package config reads ginkgo.yml: the run profiles (local, nightly, focus)
// and the suite knobs (deadline, timeout scale, mode, seed, repeat).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// FileName is the configuration file at the module root.
const FileName = "ginkgo.yml"

// Profile is one run profile's knobs.
type Profile struct {
	Name         string        `yaml:"-"`
	Deadline     time.Duration `yaml:"deadline"`
	TimeoutScale float64       `yaml:"timeout_scale"`
	Mode         string        `yaml:"mode"`
	Seed         int64         `yaml:"seed"`
	Repeat       int           `yaml:"repeat"`
	GraceFloor   time.Duration `yaml:"grace_floor"`
	// Random are the knobs of suites/random (random.go).
	Random Random `yaml:"random"`
}

// ScaledDeadline is the deadline times the scale knob.
func (p Profile) ScaledDeadline() time.Duration {
	return time.Duration(float64(p.Deadline) * p.TimeoutScale)
}

type file struct {
	Profiles map[string]Profile `yaml:"profiles"`
}

// Load reads path and returns the named profile, with LOGJAM_TIMEOUT_SCALE
// and LOGJAM_SEED applied. Unknown keys, bad values and unknown profiles
// are errors that name the problem and what is accepted.
func Load(path, profile string) (Profile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, fmt.Errorf("cannot read %s: %v", path, err)
	}
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		msg := strings.Join(strings.Fields(err.Error()), " ")
		return Profile{}, fmt.Errorf("%s is malformed: %s (expected: profiles: {<name>: {deadline, timeout_scale, mode, seed, repeat, grace_floor, random}})", path, msg)
	}
	if err := wholeNumbers(raw); err != nil {
		return Profile{}, fmt.Errorf("%s: %v", path, err)
	}
	p, ok := f.Profiles[profile]
	if !ok {
		names := make([]string, 0, len(f.Profiles))
		for n := range f.Profiles {
			names = append(names, n)
		}
		sort.Strings(names)
		return Profile{}, fmt.Errorf("%s has no profile %q (profiles: %s)", path, profile, strings.Join(names, ", "))
	}
	p.Name = profile
	if s := os.Getenv("LOGJAM_TIMEOUT_SCALE"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !finitePositive(v) {
			return Profile{}, fmt.Errorf("LOGJAM_TIMEOUT_SCALE=%q is not a finite number above 0 (such as 3)", s)
		}
		p.TimeoutScale = v
	}
	if s := os.Getenv("LOGJAM_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Profile{}, fmt.Errorf("LOGJAM_SEED=%q is not a whole number", s)
		}
		p.Seed = v
	}
	if err := p.Random.fromEnv(); err != nil {
		return Profile{}, err
	}
	if err := p.validate(path); err != nil {
		return Profile{}, err
	}
	return p, p.Random.validate(path, p.Name)
}

// Upgrade moves an old spelling a bundle's profile may carry to its name
// (Random's "Family" to Kind); a profile with both is refused.
func (p *Profile) Upgrade() error {
	if p.Random.OldFamily == "" {
		return nil
	}
	if p.Random.Kind != "" {
		return fmt.Errorf("profile %s: random: both Kind %q and its old spelling Family %q", p.Name, p.Random.Kind, p.Random.OldFamily)
	}
	p.Random.Kind, p.Random.OldFamily = p.Random.OldFamily, ""
	return nil
}

// Validate checks the knobs as Load does, for a profile read from
// elsewhere (an evidence bundle's); source names it in the error.
func (p Profile) Validate(source string) error {
	if err := p.validate(source); err != nil {
		return err
	}
	return p.Random.validate(source, p.Name)
}

func (p Profile) validate(path string) error {
	bad := func(what string) error { return fmt.Errorf("%s: profile %s: %s", path, p.Name, what) }
	switch {
	case p.Deadline <= 0:
		return bad("deadline must be a positive duration such as 20s")
	case !finitePositive(p.TimeoutScale):
		return bad("timeout_scale must be a finite number above 0")
	case float64(p.Deadline)*p.TimeoutScale > math.MaxInt64:
		return bad("deadline x timeout_scale overflows a duration")
	case p.Mode != "fast" && p.Mode != "strict":
		return bad(fmt.Sprintf("mode %q is not fast or strict", p.Mode))
	case p.Repeat < 1:
		return bad("repeat must be at least 1")
	case p.GraceFloor < 0:
		return bad("grace_floor must not be negative")
	}
	return nil
}

// wholeNumbers refuses a fraction where a whole number belongs: YAML would
// truncate `repeat: 1.5` to 1.
func wholeNumbers(raw []byte) error {
	var f struct {
		Profiles map[string]map[string]yaml.Node `yaml:"profiles"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		return err
	}
	for name, fields := range f.Profiles {
		for _, k := range []string{"seed", "repeat"} {
			if n, ok := fields[k]; ok && n.Tag != "!!int" {
				return fmt.Errorf("profile %s: %s %q is not a whole number", name, k, n.Value)
			}
		}
	}
	return nil
}

func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// Checkout is the logjam checkout whose ./logjam script started this
// logjam (cmd/logjam sets it from the script's CheckoutEnv, and takes that
// out of its environment, so no child sees it): where Find looks when the
// folder it was given is no part of a logjam module, so that
// `/path/to/logjam/logjam calibrate -sink mine.cpp` works from the user's
// own folder.
var Checkout string

// CheckoutEnv carries Checkout from the ./logjam script to cmd/logjam.
const CheckoutEnv = "LOGJAM_CHECKOUT"

// Find looks for ginkgo.yml in dir and its parents (a suite runs in its own
// package folder), then in Checkout.
func Find(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, FileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if Checkout != "" && filepath.IsAbs(Checkout) {
		p := filepath.Join(Checkout, FileName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", errors.New("no " + FileName + " in " + dir + " or its parents")
}

// Root is the module root: the folder of the ginkgo.yml found from the
// working directory up.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	path, err := Find(wd)
	if err != nil {
		return "", err
	}
	return filepath.Dir(path), nil
}

// FromEnv finds ginkgo.yml from the working directory and loads the profile
// LOGJAM_PROFILE names (local by default).
func FromEnv() (Profile, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Profile{}, err
	}
	path, err := Find(wd)
	if err != nil {
		return Profile{}, err
	}
	name := os.Getenv("LOGJAM_PROFILE")
	if name == "" {
		name = "local"
	}
	return Load(path, name)
}
