package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"logjam/internal/childbin"
)

const goTestUsage = "usage: logjam test [GO TEST ARGS] (default ./...): go test, saying what it does while the go command is silent"

// quietLimit is how long go test may be silent before a line says it is
// still going: it compiles every package first, then prints a line per
// package in order, and one package (cmd/logjam) runs for a minute or more.
const quietLimit = 15 * time.Second

// goTest runs `go test args` (./... when none) with its output passed on
// as it comes, and a line on errOut at once and then after every
// quietLimit of silence. The exit status is go test's; Ctrl-C (SIGINT or
// SIGTERM) kills the go command, its compiles and its test binaries
// (childbin.GoCommand: one process group that also dies with logjam) and
// returns 130.
func goTest(args []string, out, errOut io.Writer) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(out, goTestUsage)
		return 0
	}
	if len(args) == 0 {
		args = []string{"./..."}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return runQuietly(ctx, childbin.GoCommand(ctx, append([]string{"test"}, args...)...), "go test "+strings.Join(args, " "), quietLimit, out, errOut)
}

// runQuietly runs cmd with its output on out and errOut, saying on errOut
// what runs at once and again whenever it has been silent for quiet.
func runQuietly(ctx context.Context, cmd *exec.Cmd, what string, quiet time.Duration, out, errOut io.Writer) int {
	var mu sync.Mutex // one writer at a time; last is when cmd last wrote
	started := time.Now()
	last := started
	cmd.Stdout = passOn{out, &mu, &last}
	cmd.Stderr = passOn{errOut, &mu, &last}
	// A test's grandchild that kept our pipe open must not keep us waiting.
	cmd.WaitDelay = 5 * time.Second
	fmt.Fprintf(errOut, "logjam test: %s: the go command compiles every package first and prints nothing meanwhile (under a minute in a fresh clone), then a line per package, in order\n", what)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(errOut, "logjam test: %v\n", err)
		return 2
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(quiet / 3)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				fmt.Fprintf(errOut, "logjam test: interrupted after %.0f s\n", time.Since(started).Seconds())
				return 130
			}
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal())
				}
				return exit.ExitCode()
			}
			if err != nil {
				fmt.Fprintf(errOut, "logjam test: %v\n", err)
				return 2
			}
			return 0
		case now := <-tick.C:
			mu.Lock()
			if now.Sub(last) >= quiet {
				fmt.Fprintf(errOut, "logjam test: %s is still compiling or running the next package in order (%.0f s so far)\n", what, now.Sub(started).Seconds())
				last = now
			}
			mu.Unlock()
		}
	}
}

// passOn writes to w and notes when.
type passOn struct {
	w    io.Writer
	mu   *sync.Mutex
	last *time.Time
}

func (p passOn) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*p.last = time.Now()
	return p.w.Write(b)
}
