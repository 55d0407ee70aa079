package search

import (
	"strings"

	"logjam/scenario/schedule"
)

// Describe is a schedule in words, one line: the runtime, then each
// axis's words (schedule.Schedule.Words: the ending, the threads and their
// calls, the signals, sys.stderr, fd 2 and the other faults; the faults
// and lines a shrink counts are the caller's). The table
// prints it where it once printed the schedule's base64 (that is -v's):
// a reader sees what failed without decoding it. It is a function of the
// schedule alone, so a search prints the same words for the same seed.
func Describe(s schedule.Schedule) string {
	parts := []string{runtimeWords(s)}
	switch {
	case s.Lazy != nil:
		parts = append(parts, lazyWords(s.Lazy)...)
	case s.Sink != nil:
		parts = append(parts, s.Words()...)
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
