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

// Shard is shard K of N (1 <= K <= N). The zero value holds every spec.
type Shard struct{ K, N int }

// Parse reads "K/N".
func Parse(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return Shard{}, fmt.Errorf("shard %q is not K/N with 1 <= K <= N (for example 2/4)", s)
	}
	return Shard{K: ki, N: ni}, nil
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
