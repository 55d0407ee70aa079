package cpuslot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAtMostNHoldersAndReleaseFreesASlot(t *testing.T) {
	s, err := Serve(2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Setenv(Env, s.Addr)
	ctx := context.Background()
	r1, err1 := Acquire(ctx)
	r2, err2 := Acquire(ctx)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// A third waits while two are held...
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := Acquire(short); err == nil {
		t.Fatal("a third slot was granted while two were held")
	}
	// ...and is granted once one is given back.
	got := make(chan func())
	go func() { r, _ := Acquire(ctx); got <- r }()
	r1()
	r1() // idempotent
	r3 := <-got
	r2()
	r3()
}

func TestManyHoldersNeverExceedN(t *testing.T) {
	s, err := Serve(3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Setenv(Env, s.Addr)
	var held, most atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			n := held.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			held.Add(-1)
			r()
		}()
	}
	wg.Wait()
	if m := most.Load(); m > 3 || m < 1 {
		t.Fatalf("%d holders at once with 3 slots", m)
	}
}

func TestWithoutTheServerNothingIsTaken(t *testing.T) {
	t.Setenv(Env, "")
	r, err := Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r()
}

// The socket's folder is a scratch folder: Serve removes one a killed run
// left (no owner holds its lock), and Close removes its own.
func TestServeSweepsAKilledRunsSocketFolder(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	left := filepath.Join(tmp, ScratchPrefix+"-1-killed")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Serve(1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the killed run's folder is still there: %v", err)
	}
	if !strings.HasPrefix(s.Addr, filepath.Join(tmp, fmt.Sprintf("%s-%d-", ScratchPrefix, os.Getpid()))) {
		t.Errorf("socket %s is not in this run's scratch folder", s.Addr)
	}
	s.Close()
	if m, _ := filepath.Glob(filepath.Join(tmp, ScratchPrefix+"-*")); len(m) > 0 {
		t.Errorf("left after Close: %v", m)
	}
}
