// Package sim is the simulated runtime: a model of a CPython interpreter
// (GIL, threads, sys.stderr, signals, finalization) hosting a native runtime
// (backends with their own locks, a logger, binding calls) whose log sink is
// pluggable.
//
// What the OS can make real is real: fd 2 is the process's real fd 2 and a
// full pipe blocks a real write(2); an abort is a real SIGABRT. What belongs
// to the interpreter is modelled, following docs/FACTS.md. Every
// wait on an instrumented resource is an edge of a wait-for graph, and a
// cycle is reported to telemetry the moment it forms; the detector only
// reports, the threads keep waiting as the real program would.
package sim
