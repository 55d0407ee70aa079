// Package signals is every real signal of a run, in one place:
//
//   - AtMark (parent): sends the child one real signal each time it writes a
//     telemetry mark asking for it (MarkSIGINT), to the pid of its start event;
//   - ExecIgnoring (child): re-executes the program with a signal ignored, as
//     `cmd &` in a non-interactive shell starts it with SIGINT ignored (the
//     kernel keeps an ignored disposition across exec);
//   - StartWith (child): makes the program start with the disposition its
//     parent named (default or ignored), whatever its caller's was;
//   - Bridge (child): delivers each real signal to a function of the model
//     (the interpreter's pending-signal flag);
//   - DieBy (child): ends the process by a signal's default action, as a C
//     abort() or a segfault would, so the parent sees "killed by signal N";
//   - Name: a signal's conventional name ("SIGSEGV").
package signals
