// Package failpoints is the catalogue of every injection point of the
// simulated runtime, with scoped enabling (no failpoint outlives its scope)
// and the GO_FAILPOINTS builder and validator that refuses unknown points
// and malformed terms before any child starts.
//
// Injection uses pingcap/failpoint's runtime API (Enable/Eval/Call), so it
// fires under a plain `go test` or `ginkgo -r` with no source rewriting.
package failpoints

import (
	"sort"
	"strings"
)

// Value kinds a point's terms may carry.
type Kind int

// The value kinds.
const (
	// Flag: the point is on or off (`return`, `return(true)`, `off`).
	KindFlag Kind = iota
	// Int: `return(N)`.
	KindInt
	// Choice: `return("word")` with one of the point's Choices.
	KindChoice
	// Hook: a function the program registers in-process (EnableCall);
	// from GO_FAILPOINTS only `sleep(ms)` and `off` make sense.
	KindHook
)

// Point is one injection point.
type Point struct {
	Name    string
	Kind    Kind
	Choices []string // for Choice
	Does    string   // what it does, in a sentence
	Terms   string   // the terms that make sense
}

// Names of the points. The "logjam/" prefix keeps them apart from any
// other user of pingcap/failpoint in the same process.
const (
	Probe                 = "logjam/probe"
	BackendLoadFails      = "logjam/backend-load-fails"
	BackendLoadLocked     = "logjam/backend-load-locked"
	BackendExecuteDelay   = "logjam/backend-execute-delay"
	StreamWriteDelay      = "logjam/stream-write-delay"
	StreamWriteOSError    = "logjam/stream-write-oserror"
	StreamWriteInterrupt  = "logjam/stream-write-interrupt"
	DirectWriteDelay      = "logjam/direct-write-delay"
	FD2WriteErrno         = "logjam/fd2-write-errno"
	PythonWriteGILDropped = "logjam/python-write-gil-dropped"
	LazyBeforeLock        = "logjam/lazy-before-lock"
	LazySwitch            = "logjam/lazy-switch"
)

// Catalogue lists every point, sorted by name.
var Catalogue = sortPoints([]Point{
	{Name: Probe, Kind: KindInt, Does: "answers the suites' BeforeSuite probe; touches nothing", Terms: "return(N)"},
	{Name: BackendLoadFails, Kind: KindInt, Does: "the backend's load fails with this error code and logs `compileModel failed: 0x<code>` at Error level while it holds its lock", Terms: "return(N), N*return(N), off"},
	{Name: BackendLoadLocked, Kind: KindHook, Does: "runs while the backend's load holds its lock, before it logs (scenario barriers)", Terms: "sleep(ms), off; in-process: a hook"},
	{Name: BackendExecuteDelay, Kind: KindInt, Does: "execute holds the backend lock this many ms longer", Terms: "return(ms), off"},
	{Name: StreamWriteDelay, Kind: KindInt, Does: "an in-memory sys.stderr's write sleeps this many ms with the GIL released (a slow writer)", Terms: "return(ms), N*return(ms), off"},
	{Name: StreamWriteOSError, Kind: KindFlag, Does: "an in-memory sys.stderr's write raises OSError and writes nothing", Terms: "return, return(true), N*return, off"},
	{Name: StreamWriteInterrupt, Kind: KindChoice, Choices: []string{"before", "half"}, Does: "an in-memory sys.stderr's write raises KeyboardInterrupt before writing, or after writing half its text", Terms: `return("before"), return("half"), N*return("before"), off`},
	{Name: DirectWriteDelay, Kind: KindInt, Does: "each direct (C stdio) write to fd 2 sleeps this many ms first, holding the stdio lock (a slow terminal)", Terms: "return(ms), off"},
	{Name: FD2WriteErrno, Kind: KindChoice, Choices: []string{"EPIPE", "EAGAIN", "ENOSPC", "EIO"}, Does: "each write(2) on fd 2 it fires at is refused by the kernel with this errno and moves nothing (evaluated once per write call, every thread's: `K*off->N*return` refuses the K+1-th to the K+N-th)", Terms: `return("EIO"), N*return("EPIPE"), K*off->N*return("EAGAIN"), K*off->return("ENOSPC"), off`},
	{Name: PythonWriteGILDropped, Kind: KindInt, Does: "a Python write to sys.__stderr__ sleeps this many ms after it drops the GIL, before write(2) (widens the window in which another thread holds the GIL while the line is not yet written)", Terms: "return(ms), off"},
	{Name: LazyBeforeLock, Kind: KindHook, Does: "runs in _lazy_call after the fast-path checks found the backend neither initialized nor initializing on this thread, before _initialization_lock is taken (the L3 race barrier)", Terms: "sleep(ms), off; in-process: a hook"},
	{Name: LazySwitch, Kind: KindHook, Does: "runs wherever the lazy-init code could switch threads; a hook may hand the GIL over there (the contention check)", Terms: "sleep(ms), off; in-process: a hook"},
})

func sortPoints(ps []Point) []Point {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// Lookup finds a point by name.
func Lookup(name string) (Point, bool) {
	for _, p := range Catalogue {
		if p.Name == name {
			return p, true
		}
	}
	return Point{}, false
}

// Names is the catalogue's names, for messages.
func Names() string {
	n := make([]string, len(Catalogue))
	for i, p := range Catalogue {
		n[i] = p.Name
	}
	return strings.Join(n, ", ")
}
