package schedule

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// InContract refuses each edge the generator stays inside.
func TestInContractRefusesTheEdges(t *testing.T) {
	base := func() Schedule {
		return Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
			Sink: &Sink{FD2: FD2{Kind: FD2File}, Stderr: Stderr{Kind: StderrOriginal}, Threads: []Thread{{Calls: []Call{{Lines: 1, Size: 80, Level: "I"}}}}}}
	}
	if err := base().InContract(); err != nil {
		t.Fatalf("the base schedule: %v", err)
	}
	for name, change := range map[string]func(k *Sink){
		"two threads, foreign abort, a line outside a call": func(k *Sink) {
			k.Abort = &Abort{}
			k.Threads = append(k.Threads, Thread{Outside: 1})
		},
		"two threads, Fatal, captured, the other's call": func(k *Sink) {
			k.Abort = &Abort{Fatal: true}
			k.Stderr.Kind = StderrCaptured
			k.Threads = append(k.Threads, Thread{Calls: []Call{{Lines: 1, Size: 80, Level: "I"}}})
		},
		"two threads, foreign abort, captured": func(k *Sink) {
			k.Abort = &Abort{}
			k.Stderr.Kind = StderrCaptured
			k.Threads = append(k.Threads, Thread{})
		},
		"two threads, stall at the abort, a line outside a call": func(k *Sink) {
			k.Abort = &Abort{Fatal: true, After: 3}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}}
			k.Threads = append(k.Threads, Thread{Outside: 1})
		},
		"abort, the main thread's lines outside a call": func(k *Sink) { k.Abort = &Abort{Fatal: true}; k.Threads[0].Outside = 1 },
		"abort on a forwarder, two threads": func(k *Sink) {
			k.Abort = &Abort{Fatal: true}
			k.FD2 = FD2{Kind: FD2Wurlitzer, Capacity: 4096, Chunk: 1024}
			k.Threads = append(k.Threads, Thread{Calls: []Call{{Lines: 1, Size: 80, Level: "I"}}})
		},
		"a foreign abort on a forwarder": func(k *Sink) {
			k.Abort = &Abort{}
			k.FD2 = FD2{Kind: FD2Wurlitzer, Capacity: 4096, Chunk: 1}
		},
		"foreign abort, captured": func(k *Sink) { k.Abort = &Abort{}; k.Stderr.Kind = StderrCaptured },
		"foreign abort, stall, no line": func(k *Sink) {
			k.Abort = &Abort{}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{StallMs: 200}}
		},
		"abort with daemons":   func(k *Sink) { k.Abort = &Abort{Fatal: true}; k.Daemons = 1 },
		"two Ctrl-C sources":   func(k *Sink) { k.Stderr = Stderr{Kind: StderrInterrupt, K: 1, How: "before"}; k.Sigint = SigintLine },
		"half, then outside":   func(k *Sink) { k.Stderr = Stderr{Kind: StderrInterrupt, K: 1, How: "half"}; k.Outside = 1 },
		"daemons, slow stream": func(k *Sink) { k.Stderr = Stderr{Kind: StderrSlow, DelayMs: 1}; k.Daemons = 1 },
		"foreign abort, stall at a mark, no line": func(k *Sink) {
			k.Abort = &Abort{}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtLine, Ms: 200}}}}
		},
		"abort, stall at exit": func(k *Sink) {
			k.Abort = &Abort{Fatal: true}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtExit, Ms: 200}}}}
		},
		"abort, stall's SIGINT": func(k *Sink) {
			k.Abort = &Abort{Fatal: true}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtLine, Ms: 200, Sigint: true}}}}
		},
		"stall's SIGINT and another": func(k *Sink) {
			k.Sigint = SigintLine
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtExit, Ms: 200, Sigint: true}}}}
		},
		"stall at the abort, foreign": func(k *Sink) {
			k.Abort = &Abort{After: 3}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}}
		},
		"stall at the abort, after another": func(k *Sink) {
			k.Abort = &Abort{Fatal: true, After: 3}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtLine, Ms: 200}, {At: StallAtAbort, Ms: 200}}}}
		},
		"stall at the abort, sys.stderr captured": func(k *Sink) {
			k.Abort = &Abort{Fatal: true, After: 3}
			k.Stderr.Kind = StderrCaptured
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}}
		},
		"stall at the abort, 8 KiB pipe": func(k *Sink) {
			k.Abort = &Abort{Fatal: true, After: 3}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 8192, Stalling: Stalling{Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}}
		},
		"a SIGINT on another thread, linux": func(k *Sink) {
			k.Threads = append(k.Threads, Thread{Calls: []Call{{Lines: 1, Size: 80, Level: "I"}}})
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtLine, Ms: 200, Sigint: true, SigintThread: 1}}}}
		},
		"a stall of 50 ms": func(k *Sink) {
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtExit, Ms: 50}}}}
		},
	} {
		s := base()
		change(s.Sink)
		if err := s.InContract(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// An abort with several threads lies inside the contract where
// docs/CONTRACT.md ("Fatal and abort with several threads") says so.
func TestInContractTakesAbortsWithSeveralThreads(t *testing.T) {
	call := Call{Lines: 1, Size: 80, Level: "I"}
	for name, k := range map[string]*Sink{
		"Fatal, others' calls and lines outside a call": {Abort: &Abort{Fatal: true}, Threads: []Thread{{Calls: []Call{call, call}}, {Calls: []Call{call}, Outside: 8}, {Outside: 1}}},
		"foreign, others' calls":                        {Abort: &Abort{After: 2}, Threads: []Thread{{Calls: []Call{call}}, {Calls: []Call{call, call}}}},
		"Fatal, captured, others' lines outside a call": {Abort: &Abort{Fatal: true}, Stderr: Stderr{Kind: StderrCaptured}, Threads: []Thread{{Calls: []Call{call}}, {Outside: 2}}},
		"Fatal, stall at the abort, others' calls": {Abort: &Abort{Fatal: true, After: 64}, FD2: FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}},
			Threads: []Thread{{Calls: []Call{call}}, {Calls: []Call{call}}}},
	} {
		if k.FD2.Kind == "" {
			k.FD2.Kind = FD2File
		}
		if k.Stderr.Kind == "" {
			k.Stderr.Kind = StderrOriginal
		}
		s := Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12", Sink: k}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.InContract(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestBadSchedulesAreRefusedWithOneReason(t *testing.T) {
	for raw, want := range map[string]string{
		"%%%": "neither JSON nor base64",
		`{"kind":"sink","family":"sink","policy":"logjam","platform":"linux","python":"3.12"}`:                                                                                                                                         "old spelling",
		`{"kind":"lazyinit","policy":"logjam","variant":"fixed","platform":"linux","python":"3.12","lazy":{}}`:                                                                                                                         "not policy",
		`{"kind":"sink","policy":"logjam","variant":"fixed","platform":"linux","python":"3.12","sink":{}}`:                                                                                                                             "not variant",
		`{"kind":"sink","kind":"lazyinit","policy":"logjam","platform":"linux","python":"3.12"}`:                                                                                                                                       "appears twice",
		`{"Kind":"sink","policy":"logjam","platform":"linux","python":"3.12"}`:                                                                                                                                                         "not spelled as its field",
		`{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12"} {}`:                                                                                                                                                      "more after",
		`{"kind":"sink","policy":"nosuch","platform":"linux","python":"3.12","sink":{}}`:                                                                                                                                               "policy",
		`{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[]}}`:                                                                                "threads",
		`{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","extra":1}`:                                                                                                                                               "unknown field",
		`{"kind":"lazyinit","variant":"fixed","platform":"linux","python":"3.12","lazy":{"backend":"tpu","ops":[]}}`:                                                                                                                   "backend",
		`{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file","stalls":[{"at":"exit","ms":200}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`: "stalls need fd2 kind pipe",
		`{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"line","thread":1,"ms":200}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`: "does not exist",
		`{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"line","line":2,"ms":200}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`:   "line 2",
		`{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"noon","ms":200}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`:            "noon",
	} {
		_, err := Decode(raw)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line about %q", raw, err, want)
		}
	}
}

func TestFailpointsFireAtTheKthWrite(t *testing.T) {
	s := Schedule{Sink: &Sink{Stderr: Stderr{Kind: StderrInterrupt, K: 3, How: "before"}}}
	if got := s.Failpoints().Env(); got != `logjam/stream-write-interrupt=2*off->1*return("before")` {
		t.Errorf("got %s", got)
	}
	s.Sink.Stderr = Stderr{Kind: StderrOSError, K: 1}
	if got := s.Failpoints().Env(); got != "logjam/stream-write-oserror=return(true)" {
		t.Errorf("got %s", got)
	}
}

// fd 2's refused writes become the fd2-write-errno failpoint's terms, which
// the failpoint validator accepts: once, N times, from the K+1-th write on.
func TestFD2ErrorsFailpointTerms(t *testing.T) {
	for e, want := range map[FD2Errors]string{
		{Errno: ErrnoEIO, Times: 1}:               `1*return("EIO")`,
		{Errno: ErrnoEPIPE, After: 4}:             `4*off->return("EPIPE")`,
		{Errno: ErrnoEAGAIN, After: 2, Times: 30}: `2*off->30*return("EAGAIN")`,
		{Errno: ErrnoENOSPC, After: 7, Times: 3}:  `7*off->3*return("ENOSPC")`,
	} {
		s := Schedule{Sink: &Sink{Stderr: Stderr{Kind: StderrOriginal}, FD2: FD2{Kind: FD2File, Errors: &e}}}
		set := s.Failpoints()
		if got := set.Env(); got != "logjam/fd2-write-errno="+want {
			t.Errorf("%+v: got %s, want %s", e, got, want)
		}
		if err := set.Validate(); err != nil {
			t.Errorf("%+v: %v", e, err)
		}
	}
	for raw, want := range map[string]string{
		`{"errno":"EBADF"}`:             "errno",
		`{"errno":"EAGAIN"}`:            "EAGAIN needs times",
		`{"errno":"EIO","times":-1}`:    "times",
		`{"errno":"EIO","after":10001}`: "after",
	} {
		js := `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file","errors":` + raw + `},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`
		if _, err := Decode(js); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error about %q", raw, err, want)
		}
	}
}

// Schedules written before the axis decode to themselves: RF1-RF4 and a
// drawn schedule without errors encode byte for byte as they were.
func TestSchedulesBeforeFD2ErrorsDecodeUnchanged(t *testing.T) {
	for id, f := range Findings {
		js := f.Schedule
		s, err := Decode(js)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if string(s.JSON()) != js || s.Sink.FD2.Errors != nil {
			t.Errorf("%s: decodes to %s", id, s.JSON())
		}
	}
}

// EAGAINs with a foreign abort, or too many of them, lie outside the
// contract; the other errnos do not.
func TestFD2ErrorsEdges(t *testing.T) {
	base := func(e FD2Errors, a *Abort) Schedule {
		return Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
			Sink: &Sink{FD2: FD2{Kind: FD2File, Errors: &e}, Stderr: Stderr{Kind: StderrOriginal}, Threads: []Thread{{Calls: []Call{{Lines: 1, Size: 80, Level: "I"}}}}, Abort: a}}
	}
	for _, tc := range []struct {
		e      FD2Errors
		a      *Abort
		inside bool
	}{
		{FD2Errors{Errno: ErrnoEAGAIN, Times: 3}, nil, true},
		{FD2Errors{Errno: ErrnoEAGAIN, Times: 3}, &Abort{Fatal: true}, true},
		{FD2Errors{Errno: ErrnoEAGAIN, Times: 3}, &Abort{After: 2}, false},
		{FD2Errors{Errno: ErrnoEAGAIN, Times: 101}, nil, false},
		{FD2Errors{Errno: ErrnoEIO}, &Abort{After: 2}, true},
	} {
		if err := base(tc.e, tc.a).InContract(); (err == nil) != tc.inside {
			t.Errorf("%+v abort %+v: %v, want inside %v", tc.e, tc.a, err, tc.inside)
		}
	}
	// A terminal whose reader only falls behind takes part of a line too
	// (ENOSPC on a pty that never stalls was LOST in some plays run six at
	// once).
	for _, stallMs := range []int{200, 0} {
		for errno, inside := range map[string]bool{ErrnoEIO: false, ErrnoENOSPC: false, ErrnoEAGAIN: true} {
			s := base(FD2Errors{Errno: errno, Times: 1}, nil)
			s.Sink.FD2.Kind, s.Sink.FD2.StallMs = FD2PTY, stallMs
			if err := s.InContract(); (err == nil) != inside {
				t.Errorf("%s on a pty stalled %d ms: %v, want inside %v", errno, stallMs, err, inside)
			}
		}
	}
}

// A forwarder that reads a byte at a time is slow by design: the run's
// deadline grows with its reads, and not for one that reads the pipe whole.
func TestAForwardersSmallReadsLengthenTheDeadline(t *testing.T) {
	s := Schedule{Kind: KindSink, Policy: "merged", Platform: "linux", Python: "3.12",
		Sink: &Sink{FD2: FD2{Kind: FD2Wurlitzer, Capacity: 65536, Chunk: 1}, Stderr: Stderr{Kind: StderrOriginal},
			Threads: []Thread{{Calls: []Call{{Lines: 100, Size: 1000, Level: "I"}}}}}}
	if got, want := s.Slowness(), time.Duration(s.MessageBytes())*forwarderReadMax; got != want {
		t.Errorf("one byte a read: slowness %v, want %v", got, want)
	}
	s.Sink.FD2.Chunk = 65536
	if got := s.Slowness(); got > time.Millisecond {
		t.Errorf("whole-pipe reads: slowness %v", got)
	}
}

// A replay string written before a schedule's kind was named so ("family",
// a lazyinit schedule's variant as "policy") still decodes, to the same
// schedule as its new form.
func TestOldFormSchedulesStillDecode(t *testing.T) {
	for old, now := range map[string]string{
		`{"family":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":1,"size":80,"level":"I"}]}]}}`: `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":1,"size":80,"level":"I"}]}]}}`,
		`{"family":"lazyinit","policy":"fixed","platform":"linux","python":"3.12","lazy":{"backend":"cuda","race":true,"ops":["call"]}}`:                                                                           `{"kind":"lazyinit","variant":"fixed","platform":"linux","python":"3.12","lazy":{"backend":"cuda","race":true,"ops":["call"]}}`,
	} {
		for _, raw := range []string{old, base64.RawURLEncoding.EncodeToString([]byte(old))} {
			s, err := Decode(raw)
			if err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			if got := string(s.JSON()); got != now {
				t.Errorf("%s decodes to\n%s, want\n%s", raw, got, now)
			}
		}
	}
}

// TestEAGAINsWithAStallAtTheAbortLieOutside: a line kept for want of room
// (the kernel answering EAGAIN) meets a reader that reads again only once
// the Fatal line's write waits, past the fatal path's bound, and dies
// (docs/CONTRACT.md, "EAGAIN with a stall at the abort"): such a schedule
// lies outside the contract, and the same without the stall inside it.
func TestEAGAINsWithAStallAtTheAbortLieOutside(t *testing.T) {
	s := Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &Sink{FD2: FD2{Kind: FD2Pipe, Capacity: 4096, Stalling: Stalling{Stalls: []Stall{{At: StallAtAbort, Ms: 200}}},
			Errors: &FD2Errors{Errno: ErrnoEAGAIN, After: 90, Times: 29}},
			Stderr: Stderr{Kind: StderrOriginal}, Threads: []Thread{{Calls: []Call{{Lines: 91, Size: 125, Level: "E"}}}}, Abort: &Abort{Fatal: true, After: 64}}}
	if err := s.Validate(); err != nil {
		t.Fatalf("invalid: %v", err)
	}
	if err := s.InContract(); err == nil || !strings.Contains(err.Error(), "EAGAINs with a stall at the abort") {
		t.Errorf("EAGAINs with a stall at the abort: %v, want it outside the contract", err)
	}
	s.Sink.FD2.Stalls = nil
	if err := s.InContract(); err != nil {
		t.Errorf("the same EAGAINs before a Fatal abort with no stall: %v, want it inside", err)
	}
}

// A found row's cell name is read back to its row and policy, and nothing
// else is taken for one.
func TestAFoundRowsCellNameReadsBack(t *testing.T) {
	for id := range Findings {
		for _, p := range SinkPolicies {
			if got, policy, ok := ParseCellName(CellName(id, p)); !ok || got != id || policy != p {
				t.Errorf("ParseCellName(%q) = %q, %q, %v", CellName(id, p), got, policy, ok)
			}
		}
	}
	for _, name := range []string{"RF99 x [policy=logjam]", "RF1 another-slug [policy=logjam]", "RF1 " + Findings["RF1"].Slug + " [policy=nosuch]",
		"RF1 " + Findings["RF1"].Slug + " [policy=logjam] ", "D1 load-failure-logs-under-backend-lock [policy=fd2 platform=linux py=3.12]"} {
		if id, p, ok := ParseCellName(name); ok {
			t.Errorf("ParseCellName(%q) = %q, %q", name, id, p)
		}
	}
}
