package search

import (
	"fmt"
	"logjam/harness/cell"
	"logjam/telemetry"
	"strings"
)

// threadsAtDump is what each thread held and waited for when the child
// answered the watchdog's SIGQUIT, one line ("" without a dump): all a
// FLAKY HANG with no cycle leaves to go on once its replays end OK.
func threadsAtDump(out *cell.Outcome) string {
	if out.Result == nil || out.Result.Dump == nil {
		return ""
	}
	var d telemetry.Dump
	if err := out.Result.Dump.Decode(&d); err != nil {
		return ""
	}
	var parts []string
	for _, t := range d.Locks.Threads {
		if t.Ended {
			continue
		}
		p := t.Name
		if ph := t.Phrase(); ph != "" {
			p += " " + ph
		}
		if t.Waits == "" {
			p += " waits for nothing"
		}
		parts = append(parts, p)
	}
	if calls := inSyscalls(d.Stacks); calls != "" {
		parts = append(parts, "in a system call: "+calls)
	}
	return strings.Join(parts, "; ")
}

// inSyscalls names, from a dump's goroutine stacks, where each goroutine
// in a system call was in the product's code (a write blocked on a full
// pipe is invisible to the lock table: the telemetry pipe, or a raw write
// to fd 2 such as a Go panic's), and says so of a goroutine panicking.
func inSyscalls(stacks string) string {
	var names []string
	count := map[string]int{}
	for _, g := range strings.Split(stacks, "\n\n") {
		head, body, _ := strings.Cut(g, "\n")
		where := ""
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "panic(") {
				where = "panic"
				break
			}
			if !strings.HasPrefix(l, "\t") && strings.HasPrefix(l, "logjam/") {
				if i := strings.LastIndex(l, "("); i > 0 {
					l = l[:i]
				}
				where = l
				break
			}
		}
		if where == "" || (where != "panic" && !strings.Contains(head, "[syscall")) {
			continue
		}
		if count[where] == 0 {
			names = append(names, where)
		}
		count[where]++
	}
	for i, n := range names {
		if c := count[n]; c > 1 {
			names[i] = fmt.Sprintf("%s (%d goroutines)", n, c)
		}
	}
	return strings.Join(names, ", ")
}
