// Command calbench builds logjamext for each interpreter found and runs
// calibrate/bench.py with it: each policy's per-line cost against a raw
// fwrite to fd 2, on /dev/null, a drained 64 KiB pipe and a drained
// one-page pipe, with sys.stderr buffered and unbuffered (PYTHONUNBUFFERED
// set or unset explicitly).
//
//	go run ./calibrate/cmd/calbench [-py 3.12] [-n 5000] [-reps 9]
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
	n := flag.Int("n", 5000, "lines per measurement")
	reps := flag.Int("reps", 9, "interleaved runs; the minimum is reported")
	flag.Parse()
	found := false
	for _, in := range calibrate.Discover() {
		if *py != "" && *py != in.Short() && *py != in.Version {
			continue
		}
		found = true
		dir, err := calibrate.Build(in)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calbench:", err)
			continue
		}
		script, err := calibrate.BenchScript(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calbench:", err)
			os.Exit(1)
		}
		for _, unbuf := range []bool{false, true} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			cmd := exec.CommandContext(ctx, in.Path, script, fmt.Sprint(*n), fmt.Sprint(*reps))
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "PYTHON") {
					env = append(env, kv)
				}
			}
			env = append(env, "PYTHONPATH="+dir)
			if unbuf {
				env = append(env, "PYTHONUNBUFFERED=1")
			}
			cmd.Env = env
			cmd.Stdout = os.Stdout
			err := cmd.Run()
			cancel()
			if err != nil {
				fmt.Fprintln(os.Stderr, "calbench:", in.Version, err)
			}
			fmt.Println()
		}
	}
	if !found {
		fmt.Fprintln(os.Stderr, "calbench: no python3 (3.10-3.13) found")
		os.Exit(1)
	}
}
