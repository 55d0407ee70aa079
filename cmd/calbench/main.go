// Command calbench measures the per-line cost of logjam.hpp against a raw
// fwrite to the unbuffered C stderr, in C++ (calibrate/bench/sinkbench.cpp:
// nothing else per line, one Python call per measurement), on /dev/null, a
// drained 64 KiB pipe, a drained one-page pipe and a drained pty, with 1, 10
// and 100 lines per binding call, for each interpreter found: ns per line in
// wall time and in the writer thread's CPU time, raw and logjam side by side
// with what the header adds (+ns) and the ratio raw / logjam (1.0x: as fast
// as raw), all from one run. With -base REV the header at that commit is
// measured in the same runs, its column beside this tree's.
//
//	go run ./cmd/calbench [-py 3.12] [-n 20000] [-reps 7] [-per-call 1,10,100] [-base REV]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"logjam/calibrate"
)

func main() {
	py := flag.String("py", "", "keep only this version (3.12 or 3.12.1)")
	n := flag.Int("n", 20000, "lines per measurement")
	reps := flag.Int("reps", 7, "interleaved runs; the median is reported")
	perCall := flag.String("per-call", "1,10,100", "lines per binding call (enter, lines, leave), a comma-separated list")
	baseRev := flag.String("base", "", "also measure the header at this git commit (hash, branch or tag), in the same runs")
	flag.Parse()
	calls, err := parsePerCall(*perCall)
	var base *baseHeader
	if err == nil && *baseRev != "" {
		base, err = readBase(*baseRev)
	}
	if err == nil && (*n < 1 || *n > 10000000) {
		err = fmt.Errorf("-n %d: want 1 to 10000000 lines", *n)
	}
	if err == nil && (*reps < 1 || *reps > 99) {
		err = fmt.Errorf("-reps %d: want 1 to 99 runs", *reps)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "calbench:", err)
		os.Exit(2)
	}
	found := false
	for _, in := range calibrate.Discover() {
		if *py != "" && *py != in.Short() && *py != in.Version {
			continue
		}
		found = true
		dir, driver, err := calibrate.BuildBench(in)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calbench:", err)
			continue
		}
		if base != nil {
			if err := base.build(in, dir); err != nil {
				fmt.Fprintln(os.Stderr, "calbench:", err)
				_ = os.RemoveAll(dir)
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, in.Path, driver, fmt.Sprint(*n), fmt.Sprint(*reps), calls)
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PYTHON") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, "PYTHONPATH="+dir)
		if base != nil {
			cmd.Env = append(cmd.Env, "SINKBENCH_BASE="+base.name)
		}
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		err = cmd.Run()
		cancel()
		_ = os.RemoveAll(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calbench:", in.Version, err)
		}
		fmt.Println()
	}
	if !found {
		fmt.Fprintln(os.Stderr, "calbench: no python3 (3.10-3.13) found")
		os.Exit(1)
	}
}

// parsePerCall checks -per-call: 1 to 8 numbers of lines per binding call,
// each 1 to 10000, comma-separated; returns them as the driver takes them.
func parsePerCall(s string) (string, error) {
	parts := strings.Split(s, ",")
	if len(parts) > 8 {
		return "", fmt.Errorf("-per-call: at most 8 numbers, got %d", len(parts))
	}
	for _, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 || v > 10000 {
			return "", fmt.Errorf("-per-call: want numbers of lines per binding call, 1 to 10000 each, comma-separated (1,10,100)")
		}
	}
	return strings.Join(parts, ","), nil
}

// baseHeader is logjam.hpp at another commit (-base), built beside this
// tree's as module sinkbench_base.
type baseHeader struct {
	name string // the commit's short hash: its column's name
	src  []byte
}

// revPattern is what -base accepts before git sees it: a hash, a branch or
// a tag name, never an option.
var revPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/~^-]{0,99}$`)

// readBase resolves rev in the repository here and reads its header.
func readBase(rev string) (*baseHeader, error) {
	bad := fmt.Errorf("-base: want a commit of this repository (a hash, a branch or a tag)")
	if !revPattern.MatchString(rev) {
		return nil, bad
	}
	out, err := exec.Command("git", "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}").Output()
	hash := strings.TrimSpace(string(out))
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(hash) {
		return nil, bad
	}
	src, err := exec.Command("git", "show", hash+":calibrate/include/logjam/logjam.hpp").Output()
	if err != nil || len(src) == 0 || len(src) > 1<<20 {
		return nil, fmt.Errorf("-base: commit %s has no calibrate/include/logjam/logjam.hpp (up to 1 MiB)", hash[:12])
	}
	return &baseHeader{name: hash[:7], src: src}, nil
}

// build compiles dir's sinkbench.cpp (BuildBench wrote it) against the
// base header into dir as module sinkbench_base.
func (b *baseHeader) build(in calibrate.Interpreter, dir string) error {
	inc := filepath.Join(dir, "base", "include")
	if err := os.MkdirAll(filepath.Join(inc, "logjam"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(inc, "logjam", "logjam.hpp"), b.src, 0o644); err != nil {
		return err
	}
	cxx, err := calibrate.Compiler()
	if err != nil {
		return err
	}
	// Hidden visibility: the header's inline functions and their statics
	// (the sink, the twin) stay this module's own. Exported, the dynamic
	// linker binds both modules to one copy (GCC makes a static of an
	// inline function STB_GNU_UNIQUE, one per process), and both columns
	// would measure whichever header was loaded first.
	cmd := exec.Command(cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden", "-DSINKBENCH_MODULE=sinkbench_base", "-I"+inc, "-I"+in.Include,
		filepath.Join(dir, "sinkbench.cpp"), "-o", filepath.Join(dir, "sinkbench_base"+in.ExtSuffix), "-lpthread")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building sinkbench against the header at %s for python %s: %v\n%s", b.name, in.Version, err, out)
	}
	return nil
}
