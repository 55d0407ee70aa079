// Package daemon is daemon-thread teardown at interpreter exit: the platform
// x Python-version rules, and what a thread that tries to retake the GIL
// after finalization has started suffers (docs/FACTS.md, "Interpreter exit").
//
// A thread other than the finalizing one that asks for the GIL once
// Py_FinalizeEx has set the interpreter finalizing never gets it (take_gil
// checks before waiting and again once it holds the GIL, dropping it first):
//   - Python before 3.13.8 ends it with pthread_exit. On Linux (glibc) that is
//     a forced unwind that runs C++ destructors on the way up: a catch (...)
//     that swallows it makes glibc abort ("FATAL: exception not rethrown"),
//     reaching a noexcept frame calls std::terminate, and destructors that
//     release Python objects without the GIL can segfault.
//   - Python 3.13.8 and later hang it forever (PyThread_hang_thread); the
//     process still exits.
//   - Other platforms do not run the unwind: the thread ends where it stands,
//     and whatever its frames hold (a lock_guard's lock) stays held.
//
// The package is pure description: the simulated runtime (logjam/sim) asks
// it for the rule at finalization and, while a forced unwind (a Go panic
// with the value ForcedUnwind) passes the C++ frames of the log path, what
// each frame does to it.
package daemon

import (
	"fmt"
	"syscall"
)

// Py3138 is Py_Version of 3.13.8 final, the first version that hangs a
// thread that must exit instead of calling pthread_exit.
const Py3138 uint32 = 0x030D08F0

// Fate is what a thread that retakes the GIL after finalization suffers.
type Fate string

// The fates.
const (
	// Unwind: pthread_exit with glibc's forced unwind through C++ frames.
	Unwind Fate = "forced-unwind"
	// Hang: the thread blocks forever with the GIL released; the process
	// exits without it.
	Hang Fate = "hang"
	// ExitWithoutUnwind: the thread ends without unwinding; the locks its
	// frames hold stay held.
	ExitWithoutUnwind Fate = "exit-without-unwind"
)

// Rule is what finalization does to a daemon thread on one platform and
// Python version.
type Rule struct {
	Platform string `json:"platform"`
	Python   string `json:"python"`
	Fate     Fate   `json:"fate"`
	Why      string `json:"why"`
}

// For returns the rule of a platform ("linux", "macos") and a Python
// version given as Py_Version (0x030D08F0 is 3.13.8 final).
func For(platform string, pyVersion uint32) Rule {
	p := Rule{Platform: platform, Python: versionString(pyVersion)}
	switch {
	case pyVersion >= Py3138:
		p.Fate = Hang
		p.Why = "Python 3.13.8 and later hang a thread that must exit (PyThread_hang_thread)"
	case platform == "linux":
		p.Fate = Unwind
		p.Why = "Python before 3.13.8 calls pthread_exit; glibc runs it as a forced unwind through C++ frames"
	default:
		p.Fate = ExitWithoutUnwind
		p.Why = "Python before 3.13.8 calls pthread_exit; " + platform + " does not unwind the thread's C++ frames"
	}
	return p
}

func versionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>24, v>>16&0xFF, v>>8&0xFF)
}

// ForcedUnwind is the panic value of glibc's forced unwind: a thread ended
// by pthread_exit unwinds its Go frames as C++ unwinding would, running
// deferred functions (destructors) on the way up. Only the frames below
// recover it; the thread's start routine lets it end the thread.
type ForcedUnwind struct {
	Thread string
}

func (u ForcedUnwind) Error() string {
	return "forced unwind (pthread_exit after finalization) of thread " + u.Thread
}

// FrameKind is what a C++ frame does when a forced unwind reaches it.
type FrameKind int

// The frame kinds.
const (
	// Cleanup: destructors run and the unwind goes on (a lock_guard, or a
	// catch that rethrows, as libstdc++'s streams do for __forced_unwind).
	Cleanup FrameKind = iota
	// ReleasesPyObjects: destructors that release Python objects (or the
	// thread state) without the GIL, on a finalizing interpreter: SIGSEGV.
	ReleasesPyObjects
	// CatchAll: a catch (...) that swallows the unwind; glibc aborts with
	// "FATAL: exception not rethrown".
	CatchAll
	// Noexcept: the unwind leaves a noexcept function (a destructor):
	// std::terminate, then abort.
	Noexcept
)

func (k FrameKind) String() string {
	switch k {
	case ReleasesPyObjects:
		return "releases Python objects without the GIL"
	case CatchAll:
		return "catch (...)"
	case Noexcept:
		return "noexcept"
	}
	return "cleanup"
}

// Frame is one C++ frame of the log path, as the unwinder meets it.
type Frame struct {
	Kind FrameKind
	Name string // the code, e.g. "~RuntimeErrorScope"
}

// Frame constructors, for describing a code path innermost first.
func CleanupFrame(name string) Frame           { return Frame{Cleanup, name} }
func ReleasesPyObjectsFrame(name string) Frame { return Frame{ReleasesPyObjects, name} }
func CatchAllFrame(name string) Frame          { return Frame{CatchAll, name} }
func NoexceptFrame(name string) Frame          { return Frame{Noexcept, name} }

// Ending is how a forced unwind ends the process at a frame.
type Ending struct {
	Signal syscall.Signal
	Why    string
	// Message is what the C runtime prints to stderr first ("" for none).
	Message string
}

// Reach is the forced unwind arriving at f: the ending it causes, or ok
// false when it passes through (destructors ran, unwinding goes on).
func (f Frame) Reach() (end Ending, ok bool) {
	switch f.Kind {
	case ReleasesPyObjects:
		return Ending{Signal: syscall.SIGSEGV, Why: f.Name + ": releases Python objects without the GIL during finalization"}, true
	case CatchAll:
		return Ending{Signal: syscall.SIGABRT, Why: f.Name + ": catch (...) swallowed the forced unwind; glibc aborts",
			Message: "FATAL: exception not rethrown\n"}, true
	case Noexcept:
		return Ending{Signal: syscall.SIGABRT, Why: f.Name + ": the forced unwind left a noexcept function; std::terminate"}, true
	}
	return Ending{}, false
}

// UnwindThrough walks frames innermost first and returns the first frame that ends
// the process, with its ending; ok is false if the unwind passes them all.
func UnwindThrough(frames []Frame) (end Ending, at Frame, ok bool) {
	for _, f := range frames {
		if end, ok := f.Reach(); ok {
			return end, f, true
		}
	}
	return Ending{}, Frame{}, false
}

// Unwinds is the platform x version rule in one place: a thread that must
// exit meets glibc's forced unwind (Linux, Python before 3.13.8). The merged
// fix lets daemon threads write to fd 2 exactly there.
func Unwinds(platform string, pyVersion uint32) bool {
	return For(platform, pyVersion).Fate == Unwind
}

// VersionHex parses "3.13.8" (or "3.13") into Py_Version of that final
// release; 0 when it cannot.
func VersionHex(s string) uint32 {
	var a, b, c uint32
	if n, _ := fmt.Sscanf(s, "%d.%d.%d", &a, &b, &c); n < 2 {
		return 0
	}
	return a<<24 | b<<16 | c<<8 | 0xF0
}
