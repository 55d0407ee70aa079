package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"logjam/telemetry"
)

// checkTelemetryFD refuses a WATCHDOG_TELEMETRY_FD that names no descriptor
// the child may write telemetry to: not a whole number, stdin, stdout or
// fd 2 (they belong to the script and the system under test), or a
// descriptor that is not open for writing. Unset is fine: no telemetry
// (an fd 3 the child merely inherited is never written to).
func checkTelemetryFD() error {
	s, ok := os.LookupEnv(telemetry.FDEnv)
	if !ok {
		return nil
	}
	const accepted = "accepted: unset (no telemetry), or a descriptor of 3 or more open for writing; the watchdog sets 3, -telemetry-fd sets it by hand"
	fd, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("WATCHDOG_TELEMETRY_FD=%q is not a whole number (%s)", s, accepted)
	}
	if fd < 3 {
		return fmt.Errorf("WATCHDOG_TELEMETRY_FD=%d would mix telemetry into stdin, stdout or fd 2 (%s)", fd, accepted)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return fmt.Errorf("WATCHDOG_TELEMETRY_FD=%d is not an open descriptor (%s)", fd, accepted)
	}
	if fl&unix.O_ACCMODE == unix.O_RDONLY {
		return fmt.Errorf("WATCHDOG_TELEMETRY_FD=%d is open read-only (%s)", fd, accepted)
	}
	return nil
}

// endAfter ends the process after d, whatever the simulated program is
// doing (a hung one never returns): the by-hand deadline, so a command
// pasted where no terminal is (a CI log, a script) ends on its own.
func endAfter(d time.Duration) {
	time.AfterFunc(d, func() {
		fmt.Fprintf(os.Stdout, "simrt: -deadline %s passed; ending the run (exit status 124)\n", d)
		os.Exit(124)
	})
}
