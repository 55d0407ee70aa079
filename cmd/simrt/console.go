package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"logjam/telemetry"
)

// byHandConsole is the controlling terminal (/dev/tty) of a person who runs
// simrt by hand; nil under a watchdog (it names the telemetry descriptor)
// or without a terminal. fd 2 is the system under test's and stdout the
// script's, so neither can carry the cycle, the key hints or the dump.
func byHandConsole() io.Writer {
	if os.Getenv(telemetry.FDEnv) != "" {
		return nil
	}
	fd, err := unix.Open("/dev/tty", unix.O_WRONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "/dev/tty")
}
