// Package shard splits the matrix across runners: shard K of N holds the
// specs whose full name hashes (FNV-1a) to K-1 modulo N, so N shards cover
// every spec exactly once, whatever the machine or the spec order.
package shard

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
)

// Env is the variable that carries the shard to the suites.
const Env = "LOGJAM_SHARD"

// Shard is shard K of N (1 <= K <= N <= Max). The zero value holds every spec.
type Shard struct{ K, N int }

// Max is the most shards a run may be split into: more than the matrix
// has cells to spread, and few enough that a merge can list every shard.
const Max = 256

// SkipMessage begins the message of a spec skipped because it belongs
// to another shard (suitekit's BeforeEach): a run's Ginkgo report names
// every spec of the split, those it ran and those it left to others.
const SkipMessage = "in another shard than "

// Parse reads "K/N", written as String writes it (decimal digits, no sign,
// no leading zero).
func Parse(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || ni < 1 || ni > Max || ki < 1 || ki > ni || fmt.Sprintf("%d/%d", ki, ni) != s {
		return Shard{}, fmt.Errorf("shard %q is not K/N with 1 <= K <= N <= %d (for example 2/4)", clip(s), Max)
	}
	return Shard{K: ki, N: ni}, nil
}

// clip keeps a foreign value short enough for one line of an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// FromEnv is the shard LOGJAM_SHARD names, or every spec when it is unset.
func FromEnv() (Shard, error) {
	v := os.Getenv(Env)
	if v == "" {
		return Shard{}, nil
	}
	s, err := Parse(v)
	if err != nil {
		return Shard{}, fmt.Errorf("%s: %v", Env, err)
	}
	return s, nil
}

// All says whether the shard holds every spec.
func (s Shard) All() bool { return s.N <= 1 }

// Has says whether the spec named name belongs to this shard.
func (s Shard) Has(name string) bool {
	if s.All() {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32()%uint32(s.N)) == s.K-1
}

func (s Shard) String() string {
	if s.All() {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}
