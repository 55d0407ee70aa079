package claim

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// Every spec is run by exactly one of the processes that walk the same
// order, however their claims interleave.
func TestEverySpecIsClaimedExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(Env, dir)
	const procs, specs = 4, 300
	won := make([][]bool, procs)
	var wg sync.WaitGroup
	for p := range procs {
		c, err := FromEnv()
		if err != nil || c == nil {
			t.Fatalf("FromEnv: %v, %v", c, err)
		}
		won[p] = make([]bool, specs)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range specs {
				ok, err := c.Take(fmt.Sprintf("family spec %d", i), func() []byte { return []byte(fmt.Sprint(p)) })
				if err != nil {
					t.Error(err)
					return
				}
				won[p][i] = ok
			}
		}()
	}
	wg.Wait()
	held, err := Claims(os.Getenv(Env))
	if err != nil || len(held) != specs {
		t.Fatalf("Claims: %d claims, %v", len(held), err)
	}
	byProc := map[string]int{}
	for _, b := range held {
		byProc[string(b)]++
	}
	for i := range specs {
		n := 0
		for p := range procs {
			if won[p][i] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("spec %d claimed by %d processes, want 1", i, n)
		}
	}
	for p := range procs {
		n := 0
		for _, w := range won[p] {
			if w {
				n++
			}
		}
		if byProc[fmt.Sprint(p)] != n {
			t.Errorf("process %d won %d claims, %d hold its mark", p, n, byProc[fmt.Sprint(p)])
		}
	}
}

// Two processes that disagree on a spec's text both run it: a spec is
// never skipped by every process.
func TestAnOrderThatDisagreesRunsBothNeverNeither(t *testing.T) {
	t.Setenv(Env, t.TempDir())
	a, _ := FromEnv()
	b, _ := FromEnv()
	if ok, _ := a.Take("spec x", func() []byte { return nil }); !ok {
		t.Fatal("the first claim lost")
	}
	if ok, _ := b.Take("spec y", func() []byte { return nil }); !ok {
		t.Error("another spec at the same place was skipped")
	}
}

// Unset, there is nothing to claim; a folder that is gone is an error,
// not a process that runs its family's every spec.
func TestFromEnv(t *testing.T) {
	t.Setenv(Env, "")
	if c, err := FromEnv(); c != nil || err != nil {
		t.Errorf("unset: %v, %v", c, err)
	}
	t.Setenv(Env, t.TempDir()+"/gone")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), Env) {
		t.Errorf("a missing folder: %v", err)
	}
	f, _ := os.CreateTemp(t.TempDir(), "file")
	f.Close()
	t.Setenv(Env, f.Name())
	if _, err := FromEnv(); err == nil {
		t.Error("a file was taken for a folder")
	}
}
