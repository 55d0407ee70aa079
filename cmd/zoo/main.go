// Command zoo plants each bug of the zoo (random/zoo/*.patch) in a scratch
// copy of the module and reports the random runs of `logjam` to its first
// failure per seed stream, and whether the matrix catches it (`make zoo`).
//
//	go run ./cmd/zoo [-streams 10] [-cap 2000] [-j 2] [-matrix] [-bugs id,id] [-profile local]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"logjam/internal/config"
	"logjam/random/zoo"
)

func main() { os.Exit(run(os.Args[1:])) }

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "zoo: "+format+"\n", args...)
	return 2
}

func run(args []string) int {
	fs := flag.NewFlagSet("zoo", flag.ContinueOnError)
	o := zoo.Options{}
	fs.IntVar(&o.Streams, "streams", 10, "seed streams per bug")
	fs.IntVar(&o.Cap, "cap", 2000, "runs per stream at most")
	fs.IntVar(&o.Procs, "j", 2, "children at a time")
	fs.BoolVar(&o.Matrix, "matrix", false, "also run the matrix's logjam cells with each bug planted")
	fs.StringVar(&o.Profile, "profile", "local", "ginkgo.yml profile")
	only := fs.String("bugs", "", "only these bugs (comma-separated ids)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	if o.Streams < 1 || o.Streams > 100 || o.Cap < 1 || o.Procs < 1 || o.Procs > 64 {
		return fail("-streams 1-100, -cap >= 1, -j 1-64")
	}
	wd, _ := os.Getwd()
	cfg, err := config.Find(wd)
	if err != nil {
		return fail("%v", err)
	}
	root := filepath.Dir(cfg)
	bugs, err := zoo.Load(filepath.Join(root, "random", "zoo"))
	if err != nil {
		return fail("%v", err)
	}
	if *only != "" {
		want := strings.Split(*only, ",")
		for _, id := range want {
			if !slices.ContainsFunc(bugs, func(b zoo.Bug) bool { return b.ID == id }) {
				return fail("no bug %q in random/zoo", id)
			}
		}
		bugs = slices.DeleteFunc(bugs, func(b zoo.Bug) bool { return !slices.Contains(want, b.ID) })
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("zoo: %d bugs, %d streams (first seeds %d, %d, ...), at most %d runs each, -j %d\n", len(bugs), o.Streams, zoo.StreamSeed(0), zoo.StreamSeed(1), o.Cap, o.Procs)
	results, err := zoo.Run(ctx, root, bugs, o, os.Stdout)
	fmt.Println()
	zoo.Table(os.Stdout, results, o)
	if err != nil {
		return fail("%v", err)
	}
	for _, r := range results {
		if r.Err != nil {
			return 1
		}
	}
	return 0
}
