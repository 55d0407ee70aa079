package schedule

import (
	"strings"
	"testing"
)

// workerCrashSchedule is one call of 3 lines whose pool of one worker logs
// 8 lines, the crash at the worker's 4th, fd 2 a file.
func workerCrashSchedule() Schedule {
	call := Call{Lines: 3, Size: 80, Level: "I", PoolWork: PoolWork{Pool: &Pool{Workers: 1, Lines: 8}}}
	return Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &Sink{FD2: FD2{Kind: FD2File}, Stderr: Stderr{Kind: StderrOriginal}, Threads: []Thread{{Calls: []Call{call}}},
			WorkerCrashPart: WorkerCrashPart{WorkerCrash: &WorkerCrash{At: 4}}}}
}

func TestWorkerCrashAxisRules(t *testing.T) {
	if err := workerCrashSchedule().Validate(); err != nil {
		t.Fatalf("a crash on a worker: %v", err)
	}
	if err := workerCrashSchedule().InContract(); err != nil {
		t.Fatalf("a crash on a worker: outside the contract: %v", err)
	}
	for name, tc := range map[string]struct {
		change   func(k *Sink)
		want     string
		contract bool // InContract's rule, not Validate's
	}{
		"a call with no pool": {func(k *Sink) { k.Threads[0].Calls[0].Pool = nil }, "worker_crash call 0", false},
		"no such call":        {func(k *Sink) { k.WorkerCrash.Call = 1 }, "worker_crash call 1", false},
		"no such worker":      {func(k *Sink) { k.WorkerCrash.Worker = 1 }, "worker_crash worker 1", false},
		"at line 0":           {func(k *Sink) { k.WorkerCrash.At = 0 }, "worker_crash at 0", false},
		"past the lines":      {func(k *Sink) { k.WorkerCrash.At = 9 }, "worker_crash at 9", false},
		"an abort":            {func(k *Sink) { k.Abort = &Abort{Fatal: true} }, "one ending", false},
		"a crash":             {func(k *Sink) { k.Outside, k.Crash = 1, &Crash{At: 1} }, "one ending", false},
		"another thread":      {func(k *Sink) { k.Threads = append(k.Threads, Thread{}) }, "other Python threads", true},
		"two workers":         {func(k *Sink) { k.Threads[0].Calls[0].Pool.Workers = 2 }, "a pool of several", true},
		"sys.stderr replaced": {func(k *Sink) { k.Stderr = Stderr{Kind: StderrCaptured} }, "sys.stderr replaced", true},
		"a stall":             {func(k *Sink) { k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{StallMs: 200}} }, "fd 2 stalled", true},
		"a forwarder":         {func(k *Sink) { k.FD2 = FD2{Kind: FD2Wurlitzer, Capacity: 4096, Chunk: 1024} }, "a forwarder's pipe", true},
		"a SIGINT":            {func(k *Sink) { k.Sigint, k.SigintAt = SigintLine, 1 }, "a Ctrl-C", true},
		"daemons":             {func(k *Sink) { k.Daemons = 1 }, "never reaches them", true},
	} {
		s := workerCrashSchedule()
		tc.change(s.Sink)
		err := s.Validate()
		if tc.contract {
			if err != nil {
				t.Errorf("%s: invalid: %v", name, err)
				continue
			}
			err = s.InContract()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, tc.want)
		}
	}
}

func TestWorkerCrashAxisSteps(t *testing.T) {
	s := workerCrashSchedule()
	if got, want := s.Faults(), 3; got != want {
		t.Errorf("Faults: %d, want %d (the call, the pool, the crash)", got, want)
	}
	steps := map[string]Step{}
	for _, st := range s.Steps() {
		steps[st.What+st.Key] = st
	}
	st, ok := steps["no worker crash"]
	if !ok {
		t.Fatalf("no step \"no worker crash\" among %v", steps)
	}
	c := workerCrashSchedule()
	st.Apply(&c)
	if c.Sink.WorkerCrash != nil || c.Faults() != s.Faults()-1 || c.Validate() != nil {
		t.Errorf("no worker crash: %s", c.JSON())
	}
	at, ok := steps["worker crash at"]
	if !ok {
		t.Fatal("no step \"worker crash at\"")
	}
	c = workerCrashSchedule()
	at.Set(&c, 0)
	if c.Sink.WorkerCrash.At != 1 || c.Validate() != nil {
		t.Errorf("worker crash at -> 0: %s", c.JSON())
	}
	if w := strings.Join(s.Words(), "; "); !strings.Contains(w, "on worker 0 of main's call 0, at its line 4") {
		t.Errorf("Words: %q", w)
	}
}

// TestWorkerCrashAxisDrawsInsideTheContractOnly: a run whose main thread
// has a pool draws a crash on its worker, cut to one thread and one
// worker; a run with sys.stderr replaced, which the cut cannot bring
// inside the contract, draws none.
func TestWorkerCrashAxisDrawsInsideTheContractOnly(t *testing.T) {
	s := workerCrashSchedule()
	s.Sink.WorkerCrash = nil
	s.Sink.Threads[0].Calls[0].Pool.Workers = 3
	s.Sink.Threads = append(s.Sink.Threads, Thread{Calls: []Call{{Lines: 2, Size: 80, Level: "I"}}})
	s.Sink.Daemons = 2
	workerCrashAxis{}.draw(trueDrawer{}, &s, nil)
	k := s.Sink
	if k.WorkerCrash == nil || len(k.Threads) != 1 || k.Threads[0].Calls[0].Pool.Workers != 1 || k.Daemons != 0 || s.InContract() != nil {
		t.Fatalf("the draw did not cut the run to a crash on the main thread's one worker: %s (%v)", s.JSON(), s.InContract())
	}
	s = workerCrashSchedule()
	s.Sink.WorkerCrash = nil
	s.Sink.Stderr = Stderr{Kind: StderrCaptured}
	workerCrashAxis{}.draw(trueDrawer{}, &s, nil)
	if s.Sink.WorkerCrash != nil {
		t.Fatalf("the draw put a crash on a worker with sys.stderr replaced, outside the contract: %s", s.JSON())
	}
}

// trueDrawer answers every draw with a Bool true and the lowest choice.
type trueDrawer struct{ fixedDrawer }

func (trueDrawer) Bool(string) bool { return true }
