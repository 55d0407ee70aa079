package shard

import (
	"fmt"
	"strings"
	"testing"
)

func TestEveryNameInExactlyOneShard(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7} {
		counts := make([]int, n)
		for i := range 500 {
			name := fmt.Sprintf("D%d some-slug [policy=p%d platform=linux py=3.12]", i%7, i)
			in := 0
			for k := 1; k <= n; k++ {
				if (Shard{K: k, N: n}).Has(name) {
					in++
					counts[k-1]++
				}
			}
			if in != 1 {
				t.Fatalf("N=%d: %q is in %d shards", n, name, in)
			}
		}
		for k, c := range counts {
			if n > 1 && c == 0 {
				t.Errorf("N=%d: shard %d is empty over 500 names", n, k+1)
			}
		}
	}
}

func TestParse(t *testing.T) {
	if s, err := Parse("2/4"); err != nil || s != (Shard{K: 2, N: 4}) {
		t.Fatalf("Parse(2/4) = %v, %v", s, err)
	}
	for _, bad := range []string{"", "2", "0/4", "5/4", "a/b", "1/0", "-1/3", "1/2/3",
		"1/9000000000000000000", "1/257", "+1/2", "01/2", "1/ 2", "1/2\n"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), "N <= 256") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): %v, want one line naming the bound", bad, err)
		}
	}
	if s, err := Parse("256/256"); err != nil || s != (Shard{K: 256, N: Max}) {
		t.Errorf("Parse(256/256) = %v, %v", s, err)
	}
	if !(Shard{}).All() || !(Shard{K: 1, N: 1}).All() || (Shard{K: 1, N: 2}).All() {
		t.Error("All() is wrong")
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(Env, "")
	if s, err := FromEnv(); err != nil || !s.All() {
		t.Fatalf("unset: %v, %v", s, err)
	}
	t.Setenv(Env, "3/3")
	if s, err := FromEnv(); err != nil || s != (Shard{K: 3, N: 3}) {
		t.Fatalf("3/3: %v, %v", s, err)
	}
	t.Setenv(Env, "4/3")
	if _, err := FromEnv(); err == nil {
		t.Fatal("4/3 accepted")
	}
}
