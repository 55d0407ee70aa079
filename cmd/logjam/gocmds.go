package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"logjam/internal/childbin"
	"logjam/internal/config"
)

// The go command compiles before it runs anything and prints nothing
// meanwhile (a minute or more in a fresh clone). These commands run it
// saying so: `logjam test` (go test), `logjam ginkgo` (go tool ginkgo) and
// `logjam simrt` (the child, built and then run in logjam's place).
const (
	goTestUsage = "usage: logjam test [GO TEST ARGS] (default ./...): go test, saying what it does while the go command is silent"
	ginkgoUsage = "usage: logjam ginkgo [GINKGO ARGS]: go tool ginkgo, saying what it does while it compiles the suites"
	simrtUsage  = "usage: logjam simrt [SIMRT ARGS]: the child (cmd/simrt) run by hand, built first (logjam simrt -h: its flags)"
)

// quietLimit is how long the go command may be silent before a line says
// it is still going: go test compiles every package first, then prints a
// line per package in order, and one package (cmd/logjam) runs for a
// minute or more.
const quietLimit = 15 * time.Second

// verboseTestFlag is a go test flag after which its output is the user's
// to read as go test writes it.
var verboseTestFlag = regexp.MustCompile(`^--?(v|json|test\.v)(=.*)?$`)

func goTest(args []string, out, errOut io.Writer) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(out, goTestUsage)
		return 0
	}
	if len(args) == 0 {
		args = []string{"./..."}
	}
	what := "go test " + strings.Join(args, " ")
	silence := "the go command compiles every package first and prints nothing meanwhile (under a minute in a fresh clone), then a line per package, in order"
	if slices.ContainsFunc(args, func(a string) bool { return verboseTestFlag.MatchString(a) }) {
		// The user's own -v or -json: go test's output as it is.
		return runSpeaking(childbin.GoCommand(context.Background(), append([]string{"test"}, args...)...), what, silence, quietLimit, out, errOut)
	}
	// go test -json, turned back into go test's lines, so that a package
	// whose every test skipped says so (testLines).
	lines := newTestLines(out)
	defer lines.close()
	return runSpeaking(childbin.GoCommand(context.Background(), append([]string{"test", "-json"}, args...)...), what, silence, quietLimit, lines, errOut)
}

func ginkgo(args []string, out, errOut io.Writer) int {
	// The suites read LOGJAM_PROFILE, LOGJAM_SEED and LOGJAM_TIMEOUT_SCALE
	// in their BeforeSuite, where a bad value fails the suite (exit 1):
	// refused here first, as logjam chaos refuses it (exit 2).
	if wd, err := os.Getwd(); err == nil {
		if _, err := config.Find(wd); err == nil {
			if _, err := config.FromEnv(); err != nil {
				fmt.Fprintf(errOut, "logjam: ginkgo: %v\n", err)
				return 2
			}
		}
	}
	return runSpeaking(childbin.GoCommand(context.Background(), append([]string{"tool", "ginkgo"}, args...)...), "ginkgo "+strings.Join(args, " "),
		"it compiles the suites first and prints nothing meanwhile (a minute or more in a fresh clone)", quietLimit, out, errOut)
}

// simrt builds the child (childbin.CachedCommand: the go command's cache,
// built as everywhere) and then becomes it, so that its exit status (124 at
// its deadline), its signals (Ctrl-\) and its terminal are its own.
func simrt(args []string, out, errOut io.Writer) int {
	var path strings.Builder
	if rc := runSpeaking(childbin.CachedCommand(context.Background()), "go build ./cmd/simrt", "the go command compiles the child first (half a minute in a fresh clone)", quietLimit, &path, errOut); rc != 0 {
		return rc
	}
	bin := strings.TrimSpace(path.String())
	err := syscall.Exec(bin, append([]string{"simrt"}, args...), os.Environ())
	fmt.Fprintf(errOut, "logjam simrt: %v\n", err)
	return 2
}

// runSpeaking runs cmd, a go command under childbin's group guard (a
// process group of its own that dies with logjam), with its output on out and errOut, saying on
// errOut what runs, and why it is silent, at once and again after every
// quiet of silence. The exit status is the go command's. A Ctrl-C (SIGINT
// or SIGTERM) kills the group at once (the guard starts the go command in
// the background, where a shell ignores SIGINT, so it could not be passed
// on) and the status is 130.
func runSpeaking(cmd *exec.Cmd, what, silence string, quiet time.Duration, out, errOut io.Writer) int {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	return speak(cmd, sig, what, silence, quiet, out, errOut)
}

// speak runs cmd (a group leader) as runSpeaking says, with sig the
// Ctrl-Cs.
func speak(cmd *exec.Cmd, sig <-chan os.Signal, what, silence string, quiet time.Duration, out, errOut io.Writer) int {
	var mu sync.Mutex // one writer at a time; last is when cmd last wrote
	started := time.Now()
	last := started
	cmd.Stdout = passOn{out, &mu, &last}
	cmd.Stderr = passOn{errOut, &mu, &last}
	// A test's grandchild that kept our pipe open must not keep us waiting.
	cmd.WaitDelay = 5 * time.Second
	fmt.Fprintf(errOut, "logjam: %s: %s\n", what, silence)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(errOut, "logjam: %v\n", err)
		return 2
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(quiet / 3)
	defer tick.Stop()
	interrupted := false
	for {
		select {
		case err := <-done:
			if interrupted {
				fmt.Fprintf(errOut, "logjam: %s interrupted after %.0f s\n", what, time.Since(started).Seconds())
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
				fmt.Fprintf(errOut, "logjam: %v\n", err)
				return 2
			}
			return 0
		case <-sig:
			interrupted = true
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case now := <-tick.C:
			mu.Lock()
			if now.Sub(last) >= quiet {
				fmt.Fprintf(errOut, "logjam: %s is still compiling or running (%.0f s so far, %.0f s without a line)\n", what, now.Sub(started).Seconds(), now.Sub(last).Seconds())
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
