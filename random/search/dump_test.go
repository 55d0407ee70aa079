package search

import (
	"strings"
	"testing"

	"logjam/harness/cell"
	"logjam/harness/watchdog"
	"logjam/telemetry"
)

// A FLAKY HANG with no cycle names each live thread's locks and wait at the
// watchdog's dump: its replays ended OK, so that line is all that is left.
func TestAFlakyHangNamesItsThreadsAtTheDump(t *testing.T) {
	line := `{"ev":"dump","t":9000,"locks":{"threads":[` +
		`{"name":"MainThread","holds":["the GIL"],"waits":"room on fd 2 (a terminal)","held_by":["the parent"]},` +
		`{"name":"T1","holds":[],"ended":true},` +
		`{"name":"daemon-1","daemon":true,"holds":[]}]},"stacks":""}`
	ev, ok := telemetry.Parse([]byte(line))
	if !ok {
		t.Fatal("the dump line does not parse")
	}
	got := threadsAtDump(&cell.Outcome{Result: &watchdog.Result{Dump: &ev}})
	want := "MainThread holds the GIL waits for room on fd 2 (a terminal) (held by the parent); daemon-1 waits for nothing"
	if got != want {
		t.Fatalf("threads at the dump:\n got %q\nwant %q", got, want)
	}
	f := Flaky{Seed: 7, Failure: "logjam HANG (no cycle)", Got: []string{"OK"}, Threads: got}
	if !strings.Contains(f.String(), "; the failing play's threads at its dump: MainThread holds the GIL") {
		t.Fatalf("got %q", f)
	}
	if threadsAtDump(&cell.Outcome{Result: &watchdog.Result{}}) != "" || threadsAtDump(&cell.Outcome{}) != "" {
		t.Fatal("no dump: want no threads")
	}
}

// A write blocked on a full pipe is in no lock table: the dump's stacks
// say where a goroutine in a system call was, and that one panicked.
func TestAFlakyHangNamesItsGoroutinesInASystemCall(t *testing.T) {
	stacks := "goroutine 1 [syscall]:\nsyscall.Syscall(0x1, 0x3, 0xc000, 0x40)\n\t/go/src/syscall/syscall_linux.go:73 +0x25\n" +
		"logjam/telemetry.(*Writer).Emit(0xc000123, {0x5, 0x6})\n\t/m/telemetry/writer.go:65 +0x1a5\n" +
		"logjam/sim.(*Runtime).LogBytes(0xc0001)\n\t/m/sim/runtime.go:161 +0x40\n\n" +
		"goroutine 7 [sync.Cond.Wait]:\nsync.runtime_notifyListWait(0xc00)\n\t/go/src/runtime/sema.go:597\n" +
		"logjam/sim.(*Graph).WaitUntil(0xc0002)\n\t/m/sim/graph.go:90 +0x2\n\n" +
		"goroutine 9 [syscall, 2 minutes]:\nsyscall.Syscall(0x1, 0x2)\n\t/go/src/syscall/syscall_linux.go:73\n" +
		"logjam/sim.(*FD2).blockingWrite(0xc0003, {0xc, 0x1, 0x2})\n\t/m/sim/fd2.go:743 +0x9\n\n" +
		"goroutine 11 [syscall]:\nsyscall.Syscall(0x1, 0x3)\n\t/go/src/syscall/syscall_linux.go:73\n" +
		"logjam/telemetry.(*Writer).Emit(0xc000124, {0x5, 0x6})\n\t/m/telemetry/writer.go:65 +0x1a5\n\n" +
		"goroutine 12 [running]:\npanic({0x6c, 0xc00})\n\t/go/src/runtime/panic.go:787 +0x132\n" +
		"logjam/sim.(*Interp).threadTop(0xc0004)\n\t/m/sim/finalize.go:216 +0x9\n"
	got := inSyscalls(stacks)
	want := "logjam/telemetry.(*Writer).Emit (2 goroutines), logjam/sim.(*FD2).blockingWrite, panic"
	if got != want {
		t.Fatalf("in a system call:\n got %q\nwant %q", got, want)
	}
	if inSyscalls("goroutine 7 [sync.Cond.Wait]:\nlogjam/sim.(*Graph).WaitUntil(0xc0002)\n") != "" {
		t.Fatal("a goroutine waiting on a condition is not in a system call")
	}
}
