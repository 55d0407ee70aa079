// Package calibrate runs the matrix's rows against real CPython
// interpreters: a small C++ extension (ext/logjamext.cpp and the parts it
// includes) does at the C-API level what each log-sink policy does,
// run_row.py plays each row with real threads, pipes, signals and abort(),
// and the run is judged by the same ledger rules as a simulated cell, from
// its telemetry (the wire format of cmd/simrt), its real fd-2 bytes and its
// exit status.
package calibrate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Interpreter is one CPython found on this machine, with what building the
// extension needs.
type Interpreter struct {
	Path      string // the python executable
	Version   string // "3.12.1"
	Include   string // the directory holding Python.h
	ExtSuffix string // ".cpython-312-x86_64-linux-gnu.so"
	// Missing says why the extension cannot be built ("" when it can).
	Missing string
}

// Short is "3.12" for "3.12.1".
func (in Interpreter) Short() string {
	p := strings.SplitN(in.Version, ".", 3)
	if len(p) < 2 {
		return in.Version
	}
	return p[0] + "." + p[1]
}

const probe = `import sysconfig, sys, os
inc = sysconfig.get_paths()["include"]
print(sys.executable)
print("%d.%d.%d" % sys.version_info[:3])
print(inc)
print(sysconfig.get_config_var("EXT_SUFFIX") or "")
print("yes" if os.path.exists(os.path.join(inc, "Python.h")) else "no")`

// SystemDirs are where a distribution or a local build puts its pythons,
// looked at whatever PATH says (pyenv's shims hide /usr/bin/python3).
var SystemDirs = []string{"/usr/bin", "/usr/local/bin"}

// Discover finds every CPython 3.10 to 3.13 on the machine: python3 and
// python3.X on PATH, in SystemDirs, and under ~/.pyenv/versions/3.1[0-3]*
// (roots, when set, replace the pyenv root); the same version found twice
// is kept once, the first found.
func Discover(roots ...string) []Interpreter {
	var cands []string
	names := []string{"python3", "python3.10", "python3.11", "python3.12", "python3.13"}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			cands = append(cands, p)
		}
	}
	for _, d := range SystemDirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				cands = append(cands, p)
			}
		}
	}
	if len(roots) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			roots = []string{filepath.Join(home, ".pyenv", "versions")}
		}
	}
	for _, r := range roots {
		for _, pat := range []string{"3.10*", "3.11*", "3.12*", "3.13*"} {
			ms, _ := filepath.Glob(filepath.Join(r, pat, "bin", "python3"))
			cands = append(cands, ms...)
		}
	}
	seen := map[string]bool{}
	var out []Interpreter
	for _, c := range cands {
		in, err := describe(c)
		if err != nil || seen[in.Version] {
			continue
		}
		if !(strings.HasPrefix(in.Version, "3.10.") || strings.HasPrefix(in.Version, "3.11.") ||
			strings.HasPrefix(in.Version, "3.12.") || strings.HasPrefix(in.Version, "3.13.")) {
			continue
		}
		seen[in.Version] = true
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

func describe(path string) (Interpreter, error) {
	b, err := exec.Command(path, "-c", probe).Output()
	if err != nil {
		return Interpreter{}, err
	}
	f := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(f) != 5 {
		return Interpreter{}, fmt.Errorf("%s: unexpected probe output %q", path, b)
	}
	in := Interpreter{Path: f[0], Version: f[1], Include: f[2], ExtSuffix: f[3]}
	if f[4] != "yes" {
		in.Missing = "no Python.h under " + f[2] + " (install the -dev package)"
	}
	return in, nil
}

// Default is python3 on PATH alone (what CI calibrates with).
func Default() (Interpreter, error) {
	p, err := exec.LookPath("python3")
	if err != nil {
		return Interpreter{}, fmt.Errorf("no python3 on PATH")
	}
	return describe(p)
}
