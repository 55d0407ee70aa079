// Command calbench measures the per-line cost of logjam.hpp against a raw
// fwrite to the unbuffered C stderr, in C++ (calibrate/bench/sinkbench.cpp:
// nothing else per line, one Python call per measurement), on /dev/null, a
// drained 64 KiB pipe, a drained one-page pipe and a drained pty, for each
// interpreter found: ns per line in wall time and in the writer thread's CPU
// time, and the ratio raw / logjam (1.0x: as fast as raw).
//
//	go run ./cmd/calbench [-py 3.12] [-n 20000] [-reps 7] [-per-call 1]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"logjam/calibrate"
)

func main() {
	py := flag.String("py", "", "keep only this version (3.12 or 3.12.1)")
	n := flag.Int("n", 20000, "lines per measurement")
	reps := flag.Int("reps", 7, "interleaved runs; the median is reported")
	perCall := flag.Int("per-call", 1, "lines per binding call (enter, lines, leave)")
	flag.Parse()
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
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, in.Path, driver, fmt.Sprint(*n), fmt.Sprint(*reps), fmt.Sprint(*perCall))
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PYTHON") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, "PYTHONPATH="+dir)
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
