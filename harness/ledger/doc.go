// Package ledger reconciles what a child logged with what reached a stream
// and gives one verdict: Judge runs one check per verdict, in the order of
// verdict.Precedence (BADESC, LOST, LOSTINT, DOUBLEINT, LOSTCALLBACK,
// MISROUTED, REORDERED), on a telemetry.Transcript and the real fd-2 bytes, never on an
// expected verdict. It imports nothing of the simulated runtime: a real
// CPython run that writes the same telemetry is judged the same way.
//
// # The fatal-path rule (FatalPathLines)
//
// The merged fix's documented rule (the seed's third review round): when a
// run ends in the runtime's abort after a Fatal line, the lines that reached
// fd 2 in that fatal path (the kept lines the sink wrote just before the
// fatal line, and the fatal line itself) are not MISROUTED although
// sys.stderr was replaced: an in-memory capture cannot outlive the abort, so
// fd 2 is the only stream left. Lines a sink sent to fd 2 during the call,
// before the fatal line (fd2's every-line rule), stay MISROUTED.
//
// Observations and why they can be trusted:
//   - the fatal line: a "line" event of level F followed by an "abort"
//     event. The runtime emits the line's event, hands the line to the sink,
//     then emits "abort" and raises SIGABRT, all on the logging thread;
//     telemetry is written synchronously under one mutex, so the event order
//     is the order of emission. (The cell has already checked that the child
//     really died by SIGABRT after an "abort" event.)
//   - the kept lines: the sink's "fatal-flush" event names the bytes of the
//     kept lines it wrote in its fatal branch, which only a Fatal line
//     reaches; it is emitted after those writes returned. It is accepted only
//     for that fatal line (same thread, "fatal" its sequence number), only
//     between the fatal line's event and the abort, and only for lines
//     logged before the fatal line: its call's, and those of any thread the
//     sink kept process-wide (lines logged outside a call), which the fatal
//     path writes too (docs/CONTRACT.md, "Fatal and abort with several
//     threads").
//   - fd 2 itself: each of those lines, and the fatal line, must really be on
//     fd 2, each kept line before the fatal line's first occurrence, so
//     telemetry alone never excuses a line.
package ledger
