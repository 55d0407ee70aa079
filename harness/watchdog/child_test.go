package watchdog

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"logjam/internal/testkit"
	"logjam/pipes"
	"logjam/signals"
	"logjam/telemetry"
)

// childEnv makes the test binary, re-executed, play one child behaviour
// instead of running the tests: no extra build is needed.
const childEnv = "WATCHDOG_TEST_CHILD"

func TestMain(m *testing.M) {
	if behaviour := os.Getenv(childEnv); behaviour != "" {
		os.Exit(runChild(behaviour))
	}
	// Orphaned grandchildren come to this process instead of init, so the
	// tests can reap them and then see their process group gone (init in a
	// container does not always reap).
	if err := testkit.BecomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "watchdog tests: cannot become a subreaper: %v\n", err)
	}
	os.Exit(m.Run())
}

// burstEvents is how many events the "burst" child writes after its first:
// fewer bytes than a pipe holds, so it exits without waiting for a reader.
const burstEvents = 400

// childTelemetry writes typed events on fd 3 when the watchdog opened it;
// each carries "wall_ns" for the latency benchmarks.
type childTelemetry struct {
	f *os.File
	w *telemetry.Writer
}

func openChildTelemetry() *childTelemetry {
	if f := os.NewFile(3, "telemetry"); f != nil {
		if _, err := f.Stat(); err == nil {
			return &childTelemetry{f: f, w: telemetry.NewWriter(f, time.Now())}
		}
	}
	return &childTelemetry{w: telemetry.Discard(time.Now())}
}

// stamped adds "wall_ns" to an event; pidMark adds the pid a test needs.
type (
	stampedCycle struct {
		telemetry.Cycle
		WallNs int64 `json:"wall_ns"`
	}
	stampedDump struct {
		telemetry.Dump
		WallNs int64 `json:"wall_ns"`
	}
	pidMark struct {
		telemetry.Mark
		Pid int `json:"pid,omitempty"`
	}
)

func (c *childTelemetry) emit(p telemetry.Payload) { c.w.Emit(p) }

// writeLine writes a raw line (malformed telemetry on purpose).
func (c *childTelemetry) writeLine(line string) {
	if c.f != nil {
		_, _ = c.f.WriteString(line + "\n")
	}
}

// runChild plays one behaviour and returns the exit status.
func runChild(behaviour string) int {
	tel := openChildTelemetry()
	switch behaviour {
	case "noop":
		return 0
	case "complete":
		fmt.Println("working")
		fmt.Println("done")
		return 0
	case "nomarker":
		fmt.Println("almost done") // "done" inside a longer line is not the marker
		return 0
	case "exit3":
		fmt.Println("partial output")
		fmt.Fprintln(os.Stderr, "boom: something failed")
		return 3
	case "segv":
		return childSegv()
	case "deadlock":
		return childDeadlock(tel)
	case "stubborn":
		// Ignores SIGQUIT and never dumps: only SIGKILL ends it.
		signal.Ignore(syscall.SIGQUIT)
		tel.emit(telemetry.Mark{Name: "ready"})
		hangForever()
	case "slow":
		// Finishes, but after its deadline (the starved-child tests).
		time.Sleep(1500 * time.Millisecond)
		fmt.Println("done")
		return 0
	case "sleeper":
		time.Sleep(600 * time.Second)
		return 0
	case "grandchild-hang", "grandchild-exit", "grandchild-escape":
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		sleeper := exec.Command(exe)
		sleeper.Env = append(os.Environ(), childEnv+"=sleeper")
		sleeper.Stdout, sleeper.Stderr = os.Stdout, os.Stderr // holds the watchdog's pipes open
		if behaviour == "grandchild-escape" {
			sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // leaves the watchdog's group
		}
		if err := sleeper.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		tel.emit(pidMark{Mark: telemetry.Mark{Name: "grandchild"}, Pid: sleeper.Process.Pid})
		if behaviour == "grandchild-hang" {
			hangForever()
		}
		fmt.Println("done")
		return 0
	case "malformed":
		tel.writeLine("not json")
		tel.writeLine(`{"ev":"mark","name":"first","t":1.5}`)
		tel.writeLine(`{"no_ev":true}`)
		tel.writeLine("")
		tel.writeLine(`[1,2,3]`)
		tel.writeLine(`{"ev":"mark","name":"last"}`)
		fmt.Println("done")
		return 0
	case "burst":
		// One event; once the parent has read it (the pipe is empty), a
		// burst the parent has not read when this process exits.
		tel.emit(telemetry.Mark{Name: "first"})
		for limit := time.Now().Add(10 * time.Second); tel.f != nil && queued(tel.f) > 0; {
			if time.Now().After(limit) {
				fmt.Fprintln(os.Stderr, "the parent never read the first event")
				return 1
			}
			time.Sleep(time.Millisecond)
		}
		for i := range burstEvents {
			tel.emit(telemetry.Mark{Name: fmt.Sprint("burst ", i)})
		}
		tel.emit(telemetry.Mark{Name: "last"})
		fmt.Println("done")
		return 0
	case "fd4":
		f := os.NewFile(4, "extra")
		if _, err := f.WriteString("hello on fd 4\n"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("done")
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown child behaviour %q\n", behaviour)
	return 2
}

// queued is what the pipe f writes to still holds (0 if unknown).
func queued(f *os.File) int {
	n, _ := pipes.QueuedFile(f)
	return n
}

// hangForever blocks while a ticker keeps the runtime from declaring "all
// goroutines are asleep".
func hangForever() {
	tick := time.NewTicker(50 * time.Millisecond)
	for range tick.C {
	}
}

// childDeadlock deadlocks two goroutines on two mutexes, in a way the Go
// runtime cannot detect (a ticker stays alive), reports the cycle as it forms,
// and answers SIGQUIT with a dump, then keeps hanging.
func childDeadlock(tel *childTelemetry) int {
	go hangForever()
	var m1, m2 sync.Mutex
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGQUIT)
	go func() {
		for range quit {
			stacks := make([]byte, 1<<20)
			stacks = stacks[:runtime.Stack(stacks, true)]
			tel.emit(stampedDump{Dump: telemetry.Dump{Locks: telemetry.LockTable{Threads: []telemetry.ThreadState{
				{Name: "main", Holds: []string{"m1"}, Waits: "m2", HeldBy: []string{"worker"}},
				{Name: "worker", Holds: []string{"m2"}, Waits: "m1", HeldBy: []string{"main"}},
			}}, Stacks: string(stacks)}, WallNs: time.Now().UnixNano()})
		}
	}()
	mainHolds, workerHolds := make(chan struct{}), make(chan struct{})
	go func() {
		m2.Lock()
		close(workerHolds)
		<-mainHolds
		m1.Lock() // waits for main
	}()
	m1.Lock()
	close(mainHolds)
	<-workerHolds
	tel.emit(stampedCycle{Cycle: telemetry.Cycle{
		Text:  "main holds m1 and waits for m2; worker holds m2 and waits for m1",
		Edges: []telemetry.Edge{{Thread: "main", Holds: []string{"m1"}, Waits: "m2", HeldBy: "worker"}, {Thread: "worker", Holds: []string{"m2"}, Waits: "m1", HeldBy: "main"}},
	}, WallNs: time.Now().UnixNano()})
	fmt.Println("about to wait for m2")
	m2.Lock() // the second wait: the cycle is closed
	fmt.Println("done")
	return 0
}

// childSegv dies by a real SIGSEGV, as a C program would: Go's own handler
// would turn it into exit status 2.
func childSegv() int {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}) // no core file in the package directory
	fmt.Println("about to die by SIGSEGV")
	signals.DieBy(syscall.SIGSEGV)
	return 1
}

// childCmd returns a command that runs the test binary as the given child.
func childCmd(t testing.TB, behaviour string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	// A race-enabled binary sleeps a second at exit by default.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), childEnv+"="+behaviour, "GORACE="+gorace)
	return cmd
}

// markPid returns the "pid" of the first mark event with the given name.
func markPid(t testing.TB, events []telemetry.Event, name string) int {
	t.Helper()
	for _, ev := range events {
		if ev.Ev != telemetry.KindMark {
			continue
		}
		var mark struct {
			Name string `json:"name"`
			Pid  int    `json:"pid"`
		}
		if err := ev.Decode(&mark); err == nil && mark.Name == name {
			return mark.Pid
		}
	}
	t.Fatalf("no mark %q in telemetry: %s", name, kinds(events))
	return 0
}

func kinds(events []telemetry.Event) string {
	var names []string
	for _, ev := range events {
		names = append(names, ev.Ev)
	}
	return strings.Join(names, ",")
}
