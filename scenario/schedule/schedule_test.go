package schedule

import (
	"strings"
	"testing"
)

// InContract refuses each edge the generator stays inside.
func TestInContractRefusesTheEdges(t *testing.T) {
	base := func() Schedule {
		return Schedule{Family: FamilySink, Policy: "logjam", Platform: "linux", Python: "3.12",
			Sink: &Sink{FD2: FD2{Kind: FD2File}, Stderr: Stderr{Kind: StderrOriginal}, Threads: []Thread{{Calls: []Call{{Lines: 1, Size: 80, Level: "I"}}}}}}
	}
	if err := base().InContract(); err != nil {
		t.Fatalf("the base schedule: %v", err)
	}
	for name, change := range map[string]func(k *Sink){
		"abort with two threads": func(k *Sink) { k.Abort = &Abort{Fatal: true}; k.Threads = append(k.Threads, Thread{}) },
		"abort on a forwarder": func(k *Sink) {
			k.Abort = &Abort{Fatal: true}
			k.FD2 = FD2{Kind: FD2Wurlitzer, Capacity: 4096, Chunk: 1}
		},
		"foreign abort, captured":       func(k *Sink) { k.Abort = &Abort{}; k.Stderr.Kind = StderrCaptured },
		"foreign abort, stall, no line": func(k *Sink) { k.Abort = &Abort{}; k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, StallMs: 200} },
		"abort with daemons":            func(k *Sink) { k.Abort = &Abort{Fatal: true}; k.Daemons = 1 },
		"two Ctrl-C sources":            func(k *Sink) { k.Stderr = Stderr{Kind: StderrInterrupt, K: 1, How: "before"}; k.Sigint = SigintLine },
		"half, then outside":            func(k *Sink) { k.Stderr = Stderr{Kind: StderrInterrupt, K: 1, How: "half"}; k.Outside = 1 },
		"daemons, slow stream":          func(k *Sink) { k.Stderr = Stderr{Kind: StderrSlow, DelayMs: 1}; k.Daemons = 1 },
		"foreign abort, stall at a mark, no line": func(k *Sink) {
			k.Abort = &Abort{}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtLine, Ms: 200}}}
		},
		"abort, stall at exit": func(k *Sink) {
			k.Abort = &Abort{Fatal: true}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtExit, Ms: 200}}}
		},
		"abort, stall's SIGINT": func(k *Sink) {
			k.Abort = &Abort{Fatal: true}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtLine, Ms: 200, Sigint: true}}}
		},
		"stall's SIGINT and another": func(k *Sink) {
			k.Sigint = SigintLine
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtExit, Ms: 200, Sigint: true}}}
		},
		"stall at the abort, foreign": func(k *Sink) {
			k.Abort = &Abort{After: 3}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}
		},
		"stall at the abort, after another": func(k *Sink) {
			k.Abort = &Abort{Fatal: true, After: 3}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtLine, Ms: 200}, {At: StallAtAbort, Ms: 200}}}
		},
		"stall at the abort, sys.stderr captured": func(k *Sink) {
			k.Abort = &Abort{Fatal: true, After: 3}
			k.Stderr.Kind = StderrCaptured
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}
		},
		"stall at the abort, 8 KiB pipe": func(k *Sink) {
			k.Abort = &Abort{Fatal: true, After: 3}
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 8192, Stalls: []Stall{{At: StallAtAbort, Ms: 200}}}
		},
		"a SIGINT on another thread, linux": func(k *Sink) {
			k.Threads = append(k.Threads, Thread{Calls: []Call{{Lines: 1, Size: 80, Level: "I"}}})
			k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtLine, Ms: 200, Sigint: true, SigintThread: 1}}}
		},
		"a stall of 50 ms": func(k *Sink) { k.FD2 = FD2{Kind: FD2Pipe, Capacity: 4096, Stalls: []Stall{{At: StallAtExit, Ms: 50}}} },
	} {
		s := base()
		change(s.Sink)
		if err := s.InContract(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestBadSchedulesAreRefusedWithOneReason(t *testing.T) {
	for raw, want := range map[string]string{
		"%%%": "neither JSON nor base64",
		`{"family":"sink","policy":"nosuch","platform":"linux","python":"3.12","sink":{}}`:                                                                                                                                                                          "policy",
		`{"family":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[]}}`:                                                                                                           "threads",
		`{"family":"sink","policy":"logjam","platform":"linux","python":"3.12","extra":1}`:                                                                                                                                                                          "unknown field",
		`{"family":"lazyinit","policy":"fixed","platform":"linux","python":"3.12","lazy":{"backend":"tpu","ops":[]}}`:                                                                                                                                               "backend",
		`{"family":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file","stalls":[{"at":"exit","ms":200}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`:                            "stalls need fd2 kind pipe",
		`{"family":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"line","thread":1,"ms":200}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`: "does not exist",
		`{"family":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"line","line":2,"ms":200}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`:   "line 2",
		`{"family":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"pipe","capacity":4096,"stalls":[{"at":"noon","ms":200}]},"stderr":{"kind":"original"},"threads":[{"calls":[{"lines":1,"size":80,"level":"I"}]}]}}`:            "noon",
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
