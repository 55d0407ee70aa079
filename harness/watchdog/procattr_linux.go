package watchdog

import "syscall"

// setDeathSignal makes the kernel SIGKILL the child when the thread that
// started it dies, so a test process killed outright does not orphan a hung
// child. Run keeps that thread locked and alive until the child is reaped,
// because Pdeathsig follows the thread, not the process. It reaches the
// direct child only; grandchildren rely on the group kill (or on KillAll).
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
