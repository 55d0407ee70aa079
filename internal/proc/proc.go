// Package proc reads processes from /proc: a process's (or one of its
// threads') pid, name, state, parent, group and CPU time, parsed from its
// stat line. It is the one parser of
// that line for the product (logjam's reaper of what the families left
// running) and the tests (internal/testkit). Off Linux there is no /proc:
// Read fails and List finds nothing.
package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Process is one process as its stat line shows it.
type Process struct {
	Pid, PPid, PGrp int
	Comm            string // the name, at most 15 bytes (the kernel's comm)
	State           byte   // R running, S sleeping, D disk wait, Z zombie, T stopped, ...
	CPUTicks        uint64 // user + system time, in clock ticks (USER_HZ)
}

// Zombie reports whether the process has died and waits for its parent
// to reap it: it runs nothing.
func (p Process) Zombie() bool { return p.State == 'Z' }

// Read is process pid, from /proc/pid/stat.
func Read(pid int) (Process, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Process{}, err
	}
	return parseStat(string(b))
}

// ReadTask is thread tid of process pid, from /proc/pid/task/tid/stat.
func ReadTask(pid int, tid string) (Process, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + tid + "/stat")
	if err != nil {
		return Process{}, err
	}
	return parseStat(string(b))
}

// List is every process in /proc; one that ends while List reads is left
// out.
func List() []Process {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ps []Process
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if p, err := parseStat(string(b)); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// parseStat parses "pid (comm) state ppid pgrp ...". The name may hold
// spaces and parentheses, so the fields after it are split after the
// last ')'.
func parseStat(s string) (Process, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Process{}, fmt.Errorf("a stat line without (comm): %q", s)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return Process{}, fmt.Errorf("a stat line without state, ppid and pgrp: %q", s)
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(s[:open]))
	ppid, err2 := strconv.Atoi(f[1])
	pgrp, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return Process{}, fmt.Errorf("a stat line with a pid that is not a number: %q", s)
	}
	p := Process{Pid: pid, PPid: ppid, PGrp: pgrp, Comm: s[open+1 : end], State: f[0][0]}
	if len(f) >= 13 { // utime and stime, fields 14 and 15 of the line
		u, err1 := strconv.ParseUint(f[11], 10, 64)
		t, err2 := strconv.ParseUint(f[12], 10, 64)
		if err1 == nil && err2 == nil {
			p.CPUTicks = u + t
		}
	}
	return p, nil
}
