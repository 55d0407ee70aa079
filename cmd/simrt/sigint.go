package main

import (
	"strings"
	"syscall"

	"logjam/signals"
)

// startWithSIGINT gives the process the SIGINT disposition -sigint names
// (or -sigint-ignored, its older spelling); with neither, the inherited one
// stays, as a run by hand keeps its shell's. It returns done with the exit
// status when it could not (or when the exec failed).
func startWithSIGINT(flagValue string, ignoredAlias bool, args []string) (code int, done bool) {
	if ignoredAlias {
		if flagValue != "" && flagValue != string(signals.Ignored) {
			return usageError("-sigint-ignored contradicts -sigint %s", flagValue), true
		}
		flagValue = string(signals.Ignored)
	}
	if flagValue == "" {
		return 0, false
	}
	d, err := signals.ParseDisposition(flagValue)
	if err != nil {
		return usageError("-sigint: %v", err), true
	}
	if err := signals.StartWith(syscall.SIGINT, d, withoutSIGINTFlags(args)); err != nil {
		return usageError("-sigint %s: %v", d, err), true
	}
	return 0, false
}

// withoutSIGINTFlags drops -sigint VALUE, -sigint=VALUE and -sigint-ignored
// (with one or two dashes), so the executed image keeps what it was given.
func withoutSIGINTFlags(args []string) []string {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-")
		switch {
		case a == "sigint-ignored", strings.HasPrefix(a, "sigint="):
		case a == "sigint":
			i++ // and its value
		default:
			rest = append(rest, args[i])
		}
	}
	return rest
}
