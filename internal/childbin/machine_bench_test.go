package childbin

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// The machine's own costs, printed beside the bench scripts' figures
// (scripts/bench-lib.sh, machine_costs): a matrix is hundreds of process
// starts and the header's cost is system calls, so a figure from another
// machine compares only with these beside it. No test asserts them.
//
//	go test -run '^$' -bench Machine ./internal/childbin/

// BenchmarkMachineSystemCall is one getppid(2): the kernel's entry and
// exit, nothing else.
func BenchmarkMachineSystemCall(b *testing.B) {
	for b.Loop() {
		unix.Getppid()
	}
}

// BenchmarkMachineProcessStart is a start of /bin/true and its wait, from
// this Go process as the suites start the child.
func BenchmarkMachineProcessStart(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
