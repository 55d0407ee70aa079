package search

import (
	"fmt"
	"strings"

	"logjam/scenario/schedule"
)

// Describe is a schedule in words, one line: the runtime, what fd 2 and
// sys.stderr are, the signals, the threads and their calls, and the other
// faults (the faults and lines a shrink counts are the caller's). The table
// prints it where it once printed the schedule's base64 (that is -v's):
// a reader sees what failed without decoding it. It is a function of the
// schedule alone, so a search prints the same words for the same seed.
func Describe(s schedule.Schedule) string {
	parts := []string{runtimeWords(s)}
	switch {
	case s.Lazy != nil:
		parts = append(parts, lazyWords(s.Lazy)...)
	case s.Sink != nil:
		parts = append(parts, sinkWords(s.Sink)...)
	}
	return strings.Join(parts, "; ")
}

func runtimeWords(s schedule.Schedule) string {
	w := s.Platform + ", Python " + s.Python
	if s.Buffering != "" {
		w += " " + s.Buffering
	}
	return w
}

func lazyWords(l *schedule.Lazy) []string {
	w := []string{"backend " + l.Backend}
	if l.Race {
		w = append(w, "the run_now race first")
	}
	if len(l.Ops) > 0 {
		w = append(w, "then "+strings.Join(l.Ops, ", "))
	}
	return w
}

func sinkWords(k *schedule.Sink) []string {
	var w []string
	w = append(w, fd2Words(k.FD2))
	if st := stderrWords(k.Stderr); st != "" {
		w = append(w, st)
	}
	switch {
	case k.SigintIgnored:
		w = append(w, "SIGINT ignored from the start")
	}
	switch k.Sigint {
	case schedule.SigintLine:
		w = append(w, fmt.Sprintf("a SIGINT after main's line %d", k.SigintAt))
	case schedule.SigintBlocked:
		w = append(w, "a SIGINT once main blocks on fd 2")
	}
	if k.Handler == schedule.HandlerLogging {
		w = append(w, "a SIGINT handler that logs")
	}
	w = append(w, threadWords(k.Threads))
	if n := k.Outside + outsideOfThreads(k.Threads); n > 0 {
		w = append(w, plural(n, "line")+" outside a call")
	}
	if k.Daemons > 0 {
		d := plural(k.Daemons, "daemon thread")
		if k.GILDroppedMs > 0 {
			d += fmt.Sprintf(" (a write holds its line %d ms after dropping the GIL)", k.GILDroppedMs)
		}
		w = append(w, d)
	}
	if a := k.Abort; a != nil {
		end := "abort()"
		if a.Fatal {
			end = "a Fatal line (abort)"
		}
		w = append(w, fmt.Sprintf("main's last call logs %d more, then %s", a.After, end))
	}
	if c := k.Crash; c != nil {
		w = append(w, fmt.Sprintf("a crash handler's Fatal line at outside line %d", c.At))
	}
	if f := k.Fork; f != nil {
		fw := fmt.Sprintf("a fork whose child logs %s", plural(f.Lines, "line"))
		if f.Held {
			fw += ", the sink's locks held"
		}
		w = append(w, fw)
	}
	return w
}

func fd2Words(f schedule.FD2) string {
	var w string
	switch f.Kind {
	case schedule.FD2File:
		w = "fd 2 a file"
	case schedule.FD2Pipe:
		w = fmt.Sprintf("fd 2 a %d-byte pipe", f.Capacity)
	case schedule.FD2PTY:
		w = "fd 2 a pty"
	case schedule.FD2IPyKernel, schedule.FD2Wurlitzer:
		w = fmt.Sprintf("fd 2 %s's %d-byte pipe, read %d bytes at a time", f.Kind, f.Capacity, f.Chunk)
	default:
		w = "fd 2 " + f.Kind
	}
	if f.StallMs > 0 {
		w += fmt.Sprintf(", stalled %d ms", f.StallMs)
	}
	if n := len(f.Stalls); n > 0 {
		w += ", " + plural(n, "stall")
		sig := 0
		for _, st := range f.Stalls {
			if st.Sigint {
				sig++
			}
		}
		if sig > 0 {
			w += fmt.Sprintf(" (%d with a SIGINT)", sig)
		}
	}
	if e := f.Errors; e != nil {
		times := "every write"
		if e.Times > 0 {
			times = plural(e.Times, "write")
		}
		w += fmt.Sprintf(", %s refused with %s after %s", times, e.Errno, plural(e.After, "write"))
	}
	return w
}

func stderrWords(s schedule.Stderr) string {
	switch s.Kind {
	case schedule.StderrOriginal:
		return ""
	case schedule.StderrCaptured:
		return "sys.stderr a StringIO"
	case schedule.StderrSlow:
		return fmt.Sprintf("sys.stderr a StringIO taking %d ms a write", s.DelayMs)
	case schedule.StderrOSError:
		return fmt.Sprintf("sys.stderr raising OSError from its write %d on", s.K)
	case schedule.StderrInterrupt:
		return fmt.Sprintf("sys.stderr raising KeyboardInterrupt at its write %d (%s)", s.K, s.How)
	case schedule.StderrSignalWait:
		return "sys.stderr waiting for a SIGINT in its write"
	}
	return "sys.stderr " + s.Kind
}

// threadWords: how many threads, calls and lines, and what the calls do
// beyond logging.
func threadWords(ts []schedule.Thread) string {
	calls, lines := 0, 0
	feats := map[string]int{}
	var order []string
	feat := func(name string) {
		if feats[name] == 0 {
			order = append(order, name)
		}
		feats[name]++
	}
	var walk func(c schedule.Call)
	walk = func(c schedule.Call) {
		calls++
		lines += c.Lines
		if c.Invalid > 0 {
			feat("invalid UTF-8")
		}
		if c.CJK {
			feat("CJK text")
		}
		if c.Fails {
			feat("raising")
		}
		if c.WaitFor > 0 {
			feat("waiting for another thread")
		}
		if c.Pool != nil {
			feat("with a worker pool")
		}
		if c.Nested != nil {
			feat("nested")
			walk(*c.Nested)
		}
	}
	for _, t := range ts {
		for _, c := range t.Calls {
			walk(c)
		}
	}
	w := fmt.Sprintf("%s, %s, %s", plural(len(ts), "thread"), plural(calls, "call"), plural(lines, "line"))
	var fs []string
	for _, f := range order {
		fs = append(fs, fmt.Sprintf("%d %s", feats[f], f))
	}
	if len(fs) > 0 {
		w += " (calls: " + strings.Join(fs, ", ") + ")"
	}
	return w
}

func outsideOfThreads(ts []schedule.Thread) int {
	n := 0
	for _, t := range ts {
		n += t.Outside
	}
	return n
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
