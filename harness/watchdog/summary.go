package watchdog

import (
	"bytes"
	"fmt"
	"logjam/telemetry"
	"strings"
)

// summaryTailLines is how many of the last lines of each stream Summary shows.
const summaryTailLines = 20

// summaryLineBytes cuts a very long line in Summary.
const summaryLineBytes = 400

// Summary renders the Result for a failure message: the verdict and reason,
// the cycle, the dump's size, the last lines of stdout and stderr, and the
// command that reruns the child.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Verdict, r.Reason)
	if r.Cycle != nil {
		text := r.Cycle.Text()
		if text == "" {
			text = string(r.Cycle.Raw)
		}
		fmt.Fprintf(&b, "cycle: %s\n", text)
	}
	if r.Dump != nil {
		fmt.Fprintf(&b, "dump: %d bytes of telemetry (Result.Dump)\n", len(r.Dump.Raw))
	}
	if n := countKind(r.Events, telemetry.KindMalformed); n > 0 {
		fmt.Fprintf(&b, "telemetry: %d malformed line(s) kept in Result.Events\n", n)
	}
	writeTail(&b, "stdout", r.Stdout, r.StdoutOmitted)
	writeTail(&b, "stderr", r.Stderr, r.StderrOmitted)
	fmt.Fprintf(&b, "rerun: %s", r.Command)
	return b.String()
}

func countKind(events []telemetry.Event, kind string) int {
	n := 0
	for _, ev := range events {
		if ev.Ev == kind {
			n++
		}
	}
	return n
}

func writeTail(b *strings.Builder, name string, data []byte, omitted int64) {
	switch {
	case data == nil:
		fmt.Fprintf(b, "%s: not captured (the caller owns it)\n", name)
		return
	case len(bytes.TrimSpace(data)) == 0:
		fmt.Fprintf(b, "%s: (empty)\n", name)
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	shown := lines
	if len(shown) > summaryTailLines {
		shown = shown[len(shown)-summaryTailLines:]
	}
	fmt.Fprintf(b, "%s (last %d of %d lines", name, len(shown), len(lines))
	if omitted > 0 {
		fmt.Fprintf(b, "; %d bytes past the capture limit left out", omitted)
	}
	b.WriteString("):\n")
	for _, line := range shown {
		if len(line) > summaryLineBytes {
			line = line[:summaryLineBytes] + "..."
		}
		fmt.Fprintf(b, "  | %s\n", line)
	}
}
