// Command stress runs the whole chaos matrix N times (logjam chaos -repeat
// N, every repeat kept) while `yes > /dev/null` loaders keep the cores busy,
// and prints a table of every cell whose verdict ever differed: between
// repeats, or from its expected verdict. A verdict that changes on a loaded
// machine is a scenario bug.
//
//	go run ./stress [-n 20] [-load NCPU] [-profile local] [-focus REGEXP] [-out reports/stress]
//
// The reports of the run (matrix.json with every repeat, junit.xml, ...)
// and table.txt are left in -out. Exit status 1 when a cell differed, 130
// when interrupted (the repeats that ran are tabled).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"logjam/harness/report"
	"logjam/internal/config"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout)) }

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "stress: "+format+"\n", args...)
	return 2
}

type cell = report.Cell

const use = "usage: go run ./stress [-n N] [-load L] [-profile P] [-focus REGEXP] [-out DIR]"

func run(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("stress", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("n", 20, "how many times each cell runs")
	load := fs.Int("load", runtime.NumCPU(), "how many `yes > /dev/null` loaders run meanwhile")
	profile := fs.String("profile", "local", "profile from ginkgo.yml")
	focus := fs.String("focus", "", "run only the cells whose names match")
	out := fs.String("out", "", "reports directory (default: reports/stress at the module root)")
	if err := fs.Parse(args); err != nil {
		return fail("%v (%s)", err, use)
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q (%s)", fs.Arg(0), use)
	case *n < 1:
		return fail("-n %d: accepted: at least 1", *n)
	case *load < 0:
		return fail("-load %d: accepted: 0 or more", *load)
	}
	if _, err := regexp.Compile(*focus); err != nil {
		return fail("-focus %q is not a regular expression: %v", *focus, err)
	}
	root, err := config.Root()
	if err != nil {
		return fail("%v", err)
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(root, "reports", "stress")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return fail("%v", err)
	}
	tmp, err := os.MkdirTemp("", "logjam-stress-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)
	logjam := filepath.Join(tmp, "logjam")
	build := exec.Command("go", "build", "-o", logjam, "./cmd/logjam")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fail("building logjam: %v", err)
	}

	// A Ctrl-C reaches logjam too (same process group): it stops its run,
	// writes what it has and exits 130; stress then tables it.
	// (Caught, not ignored: an ignored SIGINT would be inherited.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT)
	loaders, err := startLoaders(*load)
	defer stopLoaders(loaders)
	if err != nil {
		return fail("starting loaders: %v", err)
	}
	cargs := []string{"chaos", "-profile", *profile, "-repeat", fmt.Sprint(*n), "-out", dir}
	if *focus != "" {
		cargs = append(cargs, "-focus", *focus)
	}
	fmt.Fprintf(w, "stress: logjam %s, with %d loader(s) on %d CPU(s)\n", strings.Join(cargs, " "), *load, runtime.NumCPU())
	start := time.Now()
	cmd := exec.Command(logjam, cargs...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, w, os.Stderr
	runErr := cmd.Run()
	stopLoaders(loaders)
	loaders = nil
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	cells, err := readMatrix(filepath.Join(dir, "matrix.json"))
	if err != nil {
		return fail("logjam exited %d (%v) and left no matrix: %v", code, runErr, err)
	}
	rows, repeats := differing(cells)
	tf, err := os.Create(filepath.Join(dir, "table.txt"))
	if err != nil {
		return fail("%v", err)
	}
	defer tf.Close()
	for _, dst := range []io.Writer{w, tf} {
		printTable(dst, rows, repeats, len(byName(cells)), *load, time.Since(start))
	}
	switch {
	case code == 130:
		return 130
	case len(rows) > 0:
		return 1
	case code != 0:
		return fail("logjam exited %d (%v)", code, runErr)
	}
	return 0
}

func startLoaders(n int) ([]*exec.Cmd, error) {
	var ls []*exec.Cmd
	for i := 0; i < n; i++ {
		cmd := exec.Command("yes")
		cmd.Stdout = nil // /dev/null
		cmd.SysProcAttr = loaderAttr()
		if err := cmd.Start(); err != nil {
			return ls, err
		}
		ls = append(ls, cmd)
	}
	return ls, nil
}

func stopLoaders(ls []*exec.Cmd) {
	for _, l := range ls {
		_ = l.Process.Kill()
		_ = l.Wait()
	}
}

func readMatrix(path string) ([]cell, error) { return report.ReadMatrix(path) }

func byName(cells []cell) map[string][]cell {
	m := map[string][]cell{}
	for _, c := range cells {
		m[c.Family+"\x00"+c.Name] = append(m[c.Family+"\x00"+c.Name], c)
	}
	return m
}

// row is one cell that differed: its outcomes over the repeats, and the
// first failed check's line.
type row struct {
	family, name, expected string
	seen                   map[string]int // outcome -> repeats
	missing                int            // repeats without this cell
	failure                string
}

// differing lists every cell whose outcome ever differed, between repeats
// or from its expected one (its verdict, or another check of its spec
// failed), or that is missing from a repeat, and every spec that failed
// outside a cell; and how many repeats ran.
func differing(cells []cell) ([]row, int) {
	repeats := 0
	for _, c := range cells {
		repeats = max(repeats, c.Repeat, 1)
	}
	var rows []row
	for _, cs := range byName(cells) {
		r := row{family: cs[0].Family, name: cs[0].Name, expected: string(cs[0].Expected), seen: map[string]int{}}
		bad := false
		for _, c := range cs {
			r.seen[c.Outcome()]++
			bad = bad || !c.AsExpected()
			if r.failure == "" {
				r.failure = c.FailureLine()
			}
		}
		if cs[0].Observed != report.SpecFail { // a failed spec's row exists only where it failed
			r.missing = repeats - len(cs)
		}
		if len(r.seen) > 1 || bad || r.missing > 0 {
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].family != rows[j].family {
			return rows[i].family < rows[j].family
		}
		return rows[i].name < rows[j].name
	})
	return rows, repeats
}

func printTable(w io.Writer, rows []row, repeats, cells, load int, took time.Duration) {
	fmt.Fprintf(w, "\nstress: %d cells x %d repeats with %d loader(s) in %s: %d cell(s) whose outcome ever differed\n",
		cells, repeats, load, took.Round(time.Second), len(rows))
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "%-9s %-12s %-72s %s\n", "family", "expected", "cell", "observed (repeats)")
	for _, r := range rows {
		var obs []string
		for v, n := range r.seen {
			obs = append(obs, fmt.Sprintf("%s x%d", v, n))
		}
		sort.Strings(obs)
		if r.missing > 0 {
			obs = append(obs, fmt.Sprintf("missing x%d", r.missing))
		}
		fmt.Fprintf(w, "%-9s %-12s %-72s %s\n", r.family, r.expected, r.name, strings.Join(obs, ", "))
		if r.failure != "" {
			fmt.Fprintf(w, "%-9s %-12s failed check: %s\n", "", "", r.failure)
		}
	}
}
