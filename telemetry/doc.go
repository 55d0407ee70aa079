// Package telemetry is the child -> parent wire: one Go type per event kind,
// the writer the child uses, the reader and the decoder the parent uses.
//
// # The wire
//
// The child writes JSON lines to the descriptor named in FDEnv
// (WATCHDOG_TELEMETRY_FD; simrt -telemetry-fd sets it by hand), when open for
// writing, and nowhere else: never to an fd 3 it merely inherited, never to
// fd 2 (fd 2 belongs to the system under test). Each line is
// one JSON object:
//
//	{"ev":"<kind>","t":<ms since the child started>, <the kind's fields>}
//
// "ev" is required; "t" is optional (0 when absent). Unknown kinds and
// fields are passed through. A line that is not such an object is kept by the
// reader as a KindMalformed event. Any producer (the simulated runtime, the
// real-CPython extension in calibrate/) writes the same lines.
//
// The kinds and their fields are the types in events.go, one per kind (Kind()
// returns the "ev" string): start, exit, line, route, flush, fallback,
// fatal-flush, dropped, exception, abort, capture, capture-fd2, fd2,
// blocked-write, write-interrupted, retained, cycle, dump, mark, observed, signal, set-interrupt, handler,
// stream-wait, finalize, daemon-fate, lazy-queue, callback, native-init,
// initialized, malformed-event.
//
// Byte strings ("b" of a line, "written" of a fatal-flush) are []byte, so
// they travel as base64, as encoding/json writes them.
//
// # Marks
//
// A mark asks the parent to act at this moment: MarkSIGINT (send one real
// SIGINT to the pid of the start event), MarkFD2Pause (stop reading fd 2 for
// "ms" milliseconds).
//
// # Reading
//
// Read splits a stream into Events (the raw line plus its kind and time);
// Decode turns the events of one run into a Transcript, the typed view every
// judge reads.
package telemetry
